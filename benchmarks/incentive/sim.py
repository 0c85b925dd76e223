"""The incentive study's subnet, in wall-clock time: validators that sample uids round by round at the
validator's defaults, set weights every epoch_length blocks, and Yuma consensus every tempo with bonds and
dividends (`lib/core/yuma.py`), per mechanism.

- A round is 12 s (the validator's default interval, one block). Each validator running asks its sample of the
  256 uids (`roles.py`: 15 on a GPU, 4 on a CPU) for every service they serve and it scores; the answer's score
  is drawn from the uid's behaviour (`population.py`), its deviation from the uid's mean scaled by the
  validator's spread; a uid that is down fails the query, one that declared itself down is not asked.
- Every validator sets weights every 100 blocks (its default), at its own phase, on each mechanism where its
  scorer publishes (the validator's: once its evidence supports them); where it holds, it sets the weights it
  has on chain there again (none on a mechanism it never set), so its stake keeps counting;
  the epoch runs every 360 blocks (the chain's default tempo). Commit-reveal (the chain's default, reveal period
  1): the last weights a validator committed during a tempo are revealed at its epoch and used there; before
  then nobody sees them, so a weight copier can only copy a consensus at least one epoch old.
- The epoch masks a validator's weight for a uid registered since it last set weights (the chain's
  `outdated` mask), restarts the bonds of uids registered since the last epoch, and counts a validator's stake
  on a mechanism only while it set weights there within the activity cutoff (5000 blocks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from audionet.benchmarks.incentive.answers import ROUND_S, Draw, answers_of, outages
from audionet.benchmarks.incentive.population import Group
from audionet.benchmarks.incentive.roles import EPOCH_LENGTH, TEMPO, VALIDATORS, Role
from audionet.lib.core import yuma

RESTART_S = 600.0  # how long the restarting validator is down
ACTIVITY_CUTOFF = 5000  # blocks: subtensor's default activity cutoff
VALIDATOR_EVENTS_H = 2.0  # a restart, a lost state, an added service and a fresh validator: after the miners' events
# Before `fine_from_h` the records only need to fill, and from FINE_AFTER_H after the events only four days of pay
# are summed: COARSE rounds at a time, each validator asking COARSE x its sample of distinct uids once (the
# weights, epochs and bonds still run every round).
COARSE = 10
FINE_AFTER_H = 24.0


class Scorer(Protocol):
    """A validator's way from answers to weights, for every simulated validator at once: weights per row (a
    service), combined per mechanism, and which mechanisms it publishes."""

    label: str
    rows: tuple[str, ...]
    mechanisms: tuple[str, ...]  # what each mechanism pays, for tables

    def start(self, shape: tuple[int, int, int]): ...
    def tick(self, state, seconds: float) -> None: ...
    def doubtful(self, state, serving: np.ndarray) -> np.ndarray: ...
    def observe(self, state, index: tuple, reward: np.ndarray, failed: np.ndarray) -> None: ...
    def forget(self, state, uids: np.ndarray) -> None: ...
    def restart(self, state, uids: np.ndarray) -> None: ...
    def publish(self, state, validator: int, serving: np.ndarray, scored: np.ndarray): ...


@dataclass
class Run:
    groups: list[Group]
    services: list[str]
    roles: tuple[Role, ...]
    mechanisms: tuple[str, ...]
    labels: np.ndarray  # group index per uid
    event_round: int  # the miners' events (a turned cheat, a drop, newcomers)
    validator_event_round: int  # the validators' (a restart, a lost state, an added service, a fresh validator)
    event_epoch: int  # the first epoch after the miners' events
    incentive: np.ndarray  # [epoch, mechanism, uid]
    consensus: np.ndarray  # [epoch, mechanism, uid]
    trust: np.ndarray  # [epoch, mechanism, validator]
    dividends: np.ndarray  # [epoch, mechanism, validator]
    rows: tuple[str, ...]  # what the validators' weights are per (the services)
    row_weights: np.ndarray  # [epoch, validator, row, uid]: the weights each validator committed, per row
    # per validator, each weight setting: (round, weights [mechanism, uid], weights [row, uid], published [mechanism])
    settings: list[list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]] = field(default_factory=list)
    # per epoch, per mechanism: what Yuma read (stored weights, active stake, fresh uids), to replay other bonds
    epoch_inputs: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = field(default_factory=list)

    def uids(self, predicate: Callable[[Group], bool]) -> np.ndarray:
        chosen = [i for i, g in enumerate(self.groups) if predicate(g)]
        return np.flatnonzero(np.isin(self.labels, chosen))

    def epoch_of(self, round_: int) -> int:
        """The first epoch that runs at or after `round_` (weights set then are used there)."""
        return int(round_ // TEMPO)

    def hours_after(self, epoch: int, start: int) -> float:
        """Hours from round `start` to the end of `epoch`."""
        return ((epoch + 1) * TEMPO - start) * ROUND_S / 3600

    @property
    def row_pay(self) -> np.ndarray:
        """[epoch, row, uid]: pay per service. With a mechanism per row it is the mechanism's incentive; with
        services combined on one mechanism, its incentive shared out as the validators' stake-weighted weights
        for each service make it up."""
        if self.rows == self.mechanisms:
            return self.incentive
        stake = np.array([r.stake for r in self.roles])
        parts = np.einsum("v,evrn->ern", stake, self.row_weights)
        share = np.divide(parts, parts.sum(axis=1, keepdims=True), out=np.zeros_like(parts), where=parts > 0)
        return share * self.incentive.sum(axis=1, keepdims=True)

    @property
    def validator_trust(self) -> np.ndarray:
        """[epoch, validator]: trust over mechanisms, weighted by their emission (as the chain aggregates it)."""
        return self.trust.mean(axis=1)


def simulate(
    groups: list[Group],
    services: list[str],
    scorer: Scorer,
    hours: float,
    events_h: float,
    seed: int = 0,
    roles: tuple[Role, ...] = VALIDATORS,
    fine_from_h: float = 0.0,
) -> Run:
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(groups)), [g.count for g in groups])
    n, v_count, rounds = len(labels), len(roles), int(hours * 3600 / ROUND_S)
    event = int(events_h * 3600 / ROUND_S)
    fine_from, fine_until = int(fine_from_h * 3600 / ROUND_S), event + int(FINE_AFTER_H * 3600 / ROUND_S)
    validator_event = event + int(VALIDATOR_EVENTS_H * 3600 / ROUND_S)
    answers = [answers_of(groups, s) for s in services]
    group_of = np.array(groups, dtype=object)[labels]
    changes = np.array([g.changes_h is not None or g.joins_h is not None for g in group_of], bool)
    newcomers = np.array([g.joins_h is not None for g in group_of], bool)
    new_model = np.array([g.new_model for g in group_of], bool)
    phase = np.zeros(n, int)
    down, declared = outages(groups, labels, rounds, rng)
    stake = np.array([r.stake for r in roles])
    offset = rng.integers(0, EPOCH_LENGTH, v_count)  # each validator sets weights at its own phase
    names = [r.name for r in roles]
    twins = [(w, names.index(r.twin)) for w, r in enumerate(roles) if r.twin]
    for w, v in twins:
        offset[w] = offset[v]
    starts = np.array([validator_event if r.fresh else 0 for r in roles])
    state = scorer.start((v_count, len(services), n))
    m_count = len(scorer.mechanisms)
    committed = np.zeros((v_count, m_count, n))
    committed_rows = np.zeros((v_count, len(scorer.rows), n))
    out_rows = []
    last_update = np.full((v_count, m_count), -1)
    registered = np.full(n, -1)
    bonds: list = [None] * m_count
    consensus: list[np.ndarray] = []
    out_incentive, out_trust, out_dividends, inputs = [], [], [], []
    settings: list[list] = [[] for _ in roles]
    last_epoch = 0
    for t in range(rounds):
        if t == event:
            phase[changes] = 1
            registered[newcomers] = t
            scorer.forget(state, np.flatnonzero(newcomers))
            scorer.restart(state, np.flatnonzero(new_model))
        if t == validator_event:
            for v in (v for v, r in enumerate(roles) if r.loses_state):
                _lose(state, v)
        batch = 1 if fine_from <= t < fine_until else COARSE if t % COARSE == 0 else 0
        restarting = np.array(
            [r.restarts and validator_event <= t < validator_event + RESTART_S / ROUND_S for r in roles]
        )
        active = np.flatnonzero((t >= starts) & ~restarting)
        drawn = np.flatnonzero((t >= starts) & np.array([r.twin is None for r in roles]))
        scored = (
            np.array([[r.adds != s or t >= validator_event for s in services] for r in roles]) & ~restarting[:, None]
        )
        serving = np.stack([a.served[phase, np.arange(n)] for a in answers]) & ~declared[t]
        if batch:
            scorer.tick(state, batch * ROUND_S)
            draw = Draw(rng, answers, phase, down[t], serving, roles, twins)
            draw.round(scorer, state, drawn, batch, scored, scorer.doubtful(state, serving))
        for v in active:
            role = roles[v]
            if (t - starts[v] - offset[v]) % role.every:
                continue
            if role.copies:
                if len(consensus) < role.copies:
                    continue
                rows, weights = np.zeros(committed_rows[v].shape), yuma.normalise(consensus[-role.copies], axis=1)
                published = weights.sum(axis=1) > 0
            else:
                rows, weights, published = scorer.publish(state, v, serving, scored[v])
            # holding: its last weights on chain set again, so its stake keeps counting (the validator's re-setting)
            held = ~published & (weights.sum(axis=-1) > 0) & (last_update[v] >= 0)
            last_update[v, held] = t
            if not published.any():
                continue
            committed[v, published], last_update[v, published] = weights[published], t
            committed_rows[v] = rows
            settings[v].append((t, weights.astype(np.float32), rows.astype(np.float32), published))
        if (t + 1) % TEMPO == 0:
            fresh = registered >= last_epoch
            epochs, inputs_now = [], []
            for m in range(m_count):
                set_at = last_update[:, m]
                active_stake = stake * (set_at >= 0) * (t - set_at <= ACTIVITY_CUTOFF)
                stored = yuma.quantize(committed[:, m]) * (set_at[:, None] > registered[None, :])
                epochs.append(yuma.epoch(stored, active_stake, bonds[m], fresh))
                inputs_now.append((stored.astype(np.float32), active_stake, fresh))
                bonds[m] = epochs[-1].bonds
            consensus.append(np.stack([e.consensus for e in epochs]))
            out_incentive.append(np.stack([e.incentive for e in epochs]))
            out_trust.append(np.stack([e.validator_trust for e in epochs]))
            out_dividends.append(np.stack([e.dividends for e in epochs]))
            out_rows.append(committed_rows.astype(np.float32))
            inputs.append(inputs_now)
            last_epoch = t
    return Run(
        groups,
        services,
        roles,
        scorer.mechanisms,
        labels,
        event,
        validator_event,
        event // TEMPO,
        np.array(out_incentive),
        np.array(consensus),
        np.array(out_trust),
        np.array(out_dividends),
        scorer.rows,
        np.array(out_rows),
        settings,
        inputs,
    )


def _lose(state, validator: int) -> None:
    """A validator's records gone (a lost disk): it starts again with nothing."""
    arrays = state.values() if isinstance(state, dict) else vars(state).values()
    for array in arrays:
        array[validator] = 0.0
