"""A self-dealing validator under each bond model: an honest validator that also owns a miner and moves a share of
its weight onto it, the run's epochs replayed (`bonds.py`).

The bonds penalty is there for this: at penalty 1 (the chain's default) a validator's bonds on a miner follow its
weight clipped to the consensus, so weight above the consensus buys no bonds; at penalty 0 they follow the weight
as set. The miner's own pay is clipped under every bond model. The replay moves one validator's stored weights and
runs consensus, incentive and bonds again on every epoch, from the first; it is exact but for the weight copiers,
whose copies of the consensus stay as the run had them (a validator of 0.08 of the stake moves the stake-weighted
median little).

`measure_early`: the same validator registers a newcomer at the miners' events and weights it from the first
epoch at the share its own evidence gives it a day later, before any validator has that evidence (what Yuma3's
bonds reward an early bonder for).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result
from audionet.benchmarks.incentive import bonds
from audionet.benchmarks.incentive.answers import ROUND_S
from audionet.benchmarks.incentive.roles import TEMPO
from audionet.lib.core import yuma

SELF_DEALER = "CPU B"  # a plain honest validator; its stake (0.08) is the nearest to the honest median (0.07)
FAVOURED = ("honest 1.00", "honest 0.86", "honest 0.80")  # the miner it owns: the best, middling, poor (near the floor)
FRACTIONS = (0.005, 0.02, 0.10, 0.25, 0.50)  # of its weight moved onto that miner (the small ones: the margin)
EARLY = "newcomer at 1.1"  # the miner it registers at the events and bonds early
EARLY_H = 24.0  # hours after the registration: the share it bonds early at (its own then), and the take's window


def moved(stored: np.ndarray, validator: int, uid: int, fraction: float) -> np.ndarray:
    """Stored weights [validator, uid] with `fraction` of `validator`'s (normalised) weight moved onto `uid`, as
    set_weights would store it; a validator that has set none still has none."""
    row = yuma.normalise(np.asarray(stored[validator], float))
    out = np.array(stored, float)
    if row.any():
        out[validator] = yuma.quantize((1 - fraction) * row + fraction * np.eye(row.size)[uid])[0]
    return out


def self_dealt(inputs, validator: int, uid: int, fraction: float) -> list:
    """A run's `epoch_inputs` with `validator` self-dealing on `uid` on every mechanism."""
    return [[(moved(w, validator, uid, fraction), stake, fresh) for w, stake, fresh in epoch] for epoch in inputs]


@dataclass(frozen=True)
class Take:
    """Means over a window of epochs and the mechanisms (shares of a mechanism's emission)."""

    dividends_per_stake: np.ndarray  # [validator]
    validator_emission: np.ndarray  # [validator]
    miner_emission: np.ndarray  # [uid]
    bond_share: np.ndarray  # [validator, uid]: each validator's share of each miner's bonds


def take(inputs, model: dict, window: slice) -> Take:
    per_stake, validators, miners, shares = [], [], [], []
    for found, epoch in list(zip(bonds.replay(inputs, model), inputs))[window]:
        per_stake.append([bonds.per_stake(e.dividends, stake) for e, (_, stake, _) in zip(found, epoch)])
        validators.append([e.validator_emission for e in found])
        miners.append([e.miner_emission for e in found])
        shares.append([yuma.normalise(e.bonds, axis=0) for e in found])
    means = (np.mean(x, axis=(0, 1)) for x in (validators, miners, shares))
    return Take(bonds.window_mean(np.array(per_stake)), *means)


def measure(run, window: slice, validator: int, uid: int) -> list[dict]:
    """Per bond model and fraction: the self-dealer's dividends per stake minus the other honest validators'
    median, its miner's emission, and its take (its dividends plus its miner's emission) against its take at the
    same weights without self-dealing."""
    others = [v for v, r in enumerate(run.roles) if r.honest and v != validator]
    rows = []
    for name, model in bonds.MODELS.items():
        honest = take(run.epoch_inputs, model, window)
        base = honest.validator_emission[validator] + honest.miner_emission[uid]
        copier = bonds.copier_premium(run, window, model)
        for fraction in FRACTIONS:
            dealt = take(self_dealt(run.epoch_inputs, validator, uid, fraction), model, window)
            gain = dealt.validator_emission[validator] + dealt.miner_emission[uid] - base
            rows.append(
                {
                    "bonds": name,
                    "fraction": fraction,
                    "premium": float(
                        dealt.dividends_per_stake[validator] - np.nanmedian(dealt.dividends_per_stake[others])
                    ),
                    "premium honest": float(
                        honest.dividends_per_stake[validator] - np.nanmedian(honest.dividends_per_stake[others])
                    ),
                    "bond share": float(dealt.bond_share[validator, uid]),
                    "bond share honest": float(honest.bond_share[validator, uid]),
                    "miner emission": float(dealt.miner_emission[uid]),
                    "miner emission honest": float(honest.miner_emission[uid]),
                    "take": float(base + gain),
                    "take honest": float(base),
                    "gain": float(gain / base),
                    "copier premium": copier,
                }
            )
    return rows


def bonded_early(inputs, validator: int, uid: int, share: float, start: int) -> list:
    """A run's `epoch_inputs` with `validator` weighting `uid` at `share` of its weight from epoch `start` on (a
    miner it registered then), wherever it weighted it less: as if it trusted its own miner from the first epoch."""
    out = list(inputs[:start])
    for epoch in inputs[start:]:
        rows = []
        for stored, stake, fresh in epoch:
            row = yuma.normalise(np.asarray(stored[validator], float))
            if row.any() and row[uid] < share:
                s = np.array(stored, float)
                rest = np.divide(row * (1 - share), 1 - row[uid]) if row[uid] < 1 else row
                s[validator] = yuma.quantize(np.where(np.arange(row.size) == uid, share, rest))[0]
                stored = s
            rows.append((stored, stake, fresh))
        out.append(rows)
    return out


def measure_early(run, validator: int, uid: int, hours: float = EARLY_H) -> list[dict]:
    """Per bond model: a validator that registers `uid` at the miners' events and weights it from the first epoch
    at the share its own evidence gives it a day later, against the same validator weighting it as its evidence
    arrives; its take (dividends plus its miner's emission) over the `hours` after the registration."""
    blocks = 3600 / ROUND_S
    later = next(w for t, w, *_ in run.settings[validator] if t >= run.event_round + hours * blocks)
    share = float(yuma.normalise(np.asarray(later[0], float))[uid])
    honest_at = next(t for t, w, *_ in run.settings[validator] if t >= run.event_round and w[:, uid].any())
    window = slice(run.event_epoch, run.event_epoch + int(hours * blocks / TEMPO))
    early = bonded_early(run.epoch_inputs, validator, uid, share, run.event_epoch)
    rows = []
    for name, model in bonds.MODELS.items():
        honest, dealt = take(run.epoch_inputs, model, window), take(early, model, window)
        base = honest.validator_emission[validator] + honest.miner_emission[uid]
        gain = dealt.validator_emission[validator] + dealt.miner_emission[uid] - base
        rows.append(
            {
                "bonds": name,
                "share": share,
                "honest after min": (honest_at - run.event_round) * ROUND_S / 60,
                "bond share honest": float(honest.bond_share[validator, uid]),
                "bond share": float(dealt.bond_share[validator, uid]),
                "gain": float(gain / base),
            }
        )
    return rows


def favoured_uid(run, name: str) -> int:
    """The first uid of the group `name`: the miner the self-dealer owns."""
    return int(run.uids(lambda g: g.name == name)[0])


def _seeds(rows: list[dict], key: str, fmt: str) -> str:
    return " / ".join(format(r[key], fmt) for r in rows)


def markdown(data: dict) -> str:
    seeds = " / ".join(str(s) for s in data["seeds"])
    parts = [
        "# Incentive study: a self-dealing validator under each bond model",
        "",
        f"The validator's CURVE run as `incentive.evaluate` runs it (seeds {seeds}), its epochs replayed with "
        f"`{data['self_dealer']}` (stake {data['stake']:g}, an honest validator otherwise) moving a fraction of its "
        "weight, every epoch, onto one uid it owns (`benchmarks/incentive/selfdealing.py`); means over the 12 "
        "steady hours. Dividends per stake are its dividends over its share of the active stake minus the other "
        "honest validators' median (without self-dealing in brackets); bond share: its share of the owned "
        "miner's bonds; emissions are shares of the mechanism's; take: its dividends plus its miner's emission, "
        "the change against the same validator and miner without self-dealing. Weight copiers: their premium in "
        "the same replay (for comparison: what each bond model does to copying).",
    ]
    for name in data["favoured"]:
        rows = []
        for model in bonds.MODELS:
            for fraction in FRACTIONS:
                cell = [
                    r for r in data["rows"] if (r["favoured"], r["bonds"], r["fraction"]) == (name, model, fraction)
                ]
                rows.append(
                    [
                        model,
                        f"{100 * fraction:g} %",
                        f"{_seeds(cell, 'bond share honest', '.3f')} → {_seeds(cell, 'bond share', '.3f')}",
                        f"{_seeds(cell, 'premium', '+.4f')} ({_seeds(cell, 'premium honest', '+.4f')})",
                        f"{_seeds(cell, 'miner emission honest', '.5f')} → {_seeds(cell, 'miner emission', '.5f')}",
                        _seeds(cell, "gain", "+.2%"),
                        _seeds(cell, "copier premium", "+.4f"),
                    ]
                )
        headers = ["bonds", "moved", "bond share", "dividends/stake − honest", "miner emission", "take", "copier"]
        parts += ["", f"## It owns a uid of `{name}` (seeds {seeds})", "", table(headers, rows)]
    early = data.get("early", [])
    if early:
        rows = []
        for model in bonds.MODELS:
            cell = [r for r in early if r["bonds"] == model]
            rows.append(
                [
                    model,
                    _seeds(cell, "share", ".4f"),
                    _seeds(cell, "honest after min", ".1f"),
                    f"{_seeds(cell, 'bond share honest', '.3f')} → {_seeds(cell, 'bond share', '.3f')}",
                    _seeds(cell, "gain", "+.2%"),
                ]
            )
        headers = ["bonds", "its share", "weighted honestly after (min)", "bond share", "take"]
        parts += [
            "",
            f"## It registers a uid of `{EARLY}` and bonds it early (seeds {seeds})",
            "",
            f"At the miners' events it registers the miner and, from the first epoch, weights it at the share its own "
            f"evidence gives it {EARLY_H:g} hours later (before its honest self, or any other validator, has the "
            f"evidence); take: its dividends plus its miner's emission over those {EARLY_H:g} hours, against the "
            "same validator weighting it as its evidence arrives.",
            "",
            table(headers, rows),
        ]
    return "\n".join(parts)


def plot(data: dict, path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(data["favoured"]), figsize=(5 * len(data["favoured"]), 4.2), sharey=True)
    for ax, name in zip(np.atleast_1d(axes), data["favoured"]):
        for model in bonds.MODELS:
            gains = [
                np.mean(
                    [r["gain"] for r in data["rows"] if (r["favoured"], r["bonds"], r["fraction"]) == (name, model, f)]
                )
                for f in FRACTIONS
            ]
            ax.plot([100 * f for f in FRACTIONS], [100 * g for g in gains], "o-", label=model)
        ax.axhline(0.0, color="0.5", linewidth=0.8)
        ax.set(title=f"owns a uid of {name}", xlabel="% of its weight moved onto it", ylabel="take vs honest (%)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.suptitle(
        f"A self-dealing validator ({data['self_dealer']}), mean over seeds (the three penalty-1 models overlap)",
        fontsize=10,
    )
    return save_figure(fig, path)


def write(data: dict, out: str, slug: str, name: str, command: str) -> str:
    text = markdown(data)
    write_result(out, slug, name, data, text, command, lambda path: plot(data, path))
    return text
