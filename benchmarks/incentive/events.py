"""What the study reads off a run after its events: how fast pay follows a change of a miner (bait and switch,
upgrades, a cheat turning honest, a new hotkey), what an outage costs, how a validator that lost its state
publishes, and how soon validators zero a turned cheat or weight a better newcomer.

Pay is the miners' incentive after Yuma consensus, summed over mechanisms; "the best" is the honest uids at 1.00
of the best quality; time is measured from the miners' events (the validators' for a lost state) to the end of
the epoch that first shows it.
"""

from __future__ import annotations

import numpy as np

from audionet.benchmarks.incentive.population import BAIT_QUALITY
from audionet.benchmarks.incentive.roles import TEMPO
from audionet.benchmarks.incentive.sim import ROUND_S, Run
from audionet.lib.core import yuma

EPOCH_H = TEMPO * ROUND_S / 3600
SHARE = 0.9  # "reaches the best's pay": this share of it


def group(run: Run, kind: str, quality: float | None = None) -> np.ndarray:
    return run.uids(lambda g: g.kind == kind and (quality is None or abs(g.quality - quality) < 1e-9))


def pay(run: Run) -> np.ndarray:
    """[epoch, uid]: incentive summed over mechanisms."""
    return run.incentive.sum(axis=1)


def relative_pay(run: Run, kind: str, quality: float | None = None) -> np.ndarray:
    """[epoch]: a group's mean pay over the best's."""
    each, best = pay(run), group(run, "honest", 1.0)
    reference = each[:, best].mean(axis=1)
    return np.divide(
        each[:, group(run, kind, quality)].mean(axis=1), reference, out=np.zeros(len(each)), where=reference > 0
    )


def hours_to_best(run: Run, kind: str) -> float:
    """Hours from the events until a group is paid SHARE of the best's (inf: never within the run)."""
    after = relative_pay(run, kind)[run.event_epoch :]
    reached = np.flatnonzero(after >= SHARE)
    return run.hours_after(run.event_epoch + int(reached[0]), run.event_round) if reached.size else float("inf")


def bait(run: Run, at_h: float = 6.0) -> tuple[float, float]:
    """(the bait and switch's pay over the best's at `at_h` hours after its switch, its pay beyond an honest
    miner's at 0.80 over the run after the switch, in hours of the best's pay)."""
    ratio = relative_pay(run, "bait")
    epoch = min(run.epoch_of(run.event_round + at_h * 3600 / ROUND_S), len(ratio) - 1)
    steady = relative_pay(run, "honest", BAIT_QUALITY)
    extra = (ratio - steady)[run.event_epoch :].sum() * EPOCH_H
    return float(ratio[epoch]), float(extra)


def outage_cost(run: Run, kind: str, quality: float = 0.95) -> float:
    """Share of pay a flaky group loses against honest uids of its quality (the mean of its neighbours in the
    honest spread), over every epoch from the steady window on."""
    each = pay(run)[run.event_epoch - int(12 / EPOCH_H) :]
    neighbours = np.concatenate(
        [group(run, "honest", round(quality - 0.01, 2)), group(run, "honest", round(quality + 0.01, 2))]
    )
    return float(1 - each[:, group(run, kind)].mean() / each[:, neighbours].mean())


def first_setting_trust(run: Run, role_name: str) -> float:
    """A validator's trust at the epoch that uses its first weights after the validator events (the mean over
    mechanisms)."""
    v = [r.name for r in run.roles].index(role_name)
    first = next((t for t, *_ in run.settings[v] if t >= run.validator_event_round), None)
    if first is None:
        return 0.0
    return float(run.validator_trust[min(run.epoch_of(first), len(run.validator_trust) - 1), v])


def hours_silent(run: Run, role_name: str) -> float:
    """Hours from the validator events to a validator's first weights after them."""
    v = [r.name for r in run.roles].index(role_name)
    first = next((t for t, *_ in run.settings[v] if t >= run.validator_event_round), None)
    return float("inf") if first is None else (first - run.validator_event_round) * ROUND_S / 3600


def stake_counted_holding(run: Run, role_name: str) -> float:
    """Share of the (epoch, mechanism) pairs from the validator events to a validator's first own weights in
    which its stake counted (it set weights there within the activity cutoff): 1 when holding keeps it active."""
    v = [r.name for r in run.roles].index(role_name)
    first = next((t for t, *_ in run.settings[v] if t >= run.validator_event_round), None)
    last_epoch = len(run.epoch_inputs) if first is None else min(run.epoch_of(first), len(run.epoch_inputs))
    counted = [
        stake[v] > 0
        for inputs in run.epoch_inputs[run.epoch_of(run.validator_event_round) : last_epoch]
        for _, stake, _ in inputs
    ]
    return float(np.mean(counted)) if counted else 1.0


def minutes_until(run: Run, happened) -> float:
    """Minutes after the miners' events until validators holding kappa (half) of the stake have set weights
    where `happened(weights)`: the consensus, their stake-weighted median, follows from the next epoch on."""
    found = []
    for v, role in enumerate(run.roles):
        if role.stake > 0 and not role.fresh:
            at = next((t for t, w, *_ in run.settings[v] if t >= run.event_round and happened(w)), None)
            found.append((np.inf if at is None else (at - run.event_round) * ROUND_S / 60, role.stake))
    found.sort()
    held = np.cumsum([stake for _, stake in found]) / sum(stake for _, stake in found)
    return float(found[int(np.argmax(held >= yuma.KAPPA))][0])


def timings(run: Run) -> tuple[float, float]:
    """(minutes until most stake zeroes the turned cheats, until it weights the better newcomers above the best)."""
    turned, newcomers, best = group(run, "turned"), group(run, "newcomer"), group(run, "honest", 1.0)
    zero = minutes_until(run, lambda w: w[:, turned].max() == 0)
    return zero, minutes_until(run, lambda w: w[:, newcomers].mean() > w[:, best].mean())
