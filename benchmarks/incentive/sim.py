"""The incentive study's subnet, in wall-clock time: validators that sample uids round by round at the
validator's defaults, set weights every epoch_length blocks, and Yuma consensus every tempo with bonds and
dividends (`lib/core/yuma.py`), per mechanism.

- A round is 12 s (the validator's default interval, one block). Each validator running samples 16 of the
  256 uids (its default) and asks each for every service it serves and the validator scores; the answer's
  score is drawn from the uid's behaviour (`population.py`). A validator with twice the noise asks 4 uids a
  round: its estimates carry twice the standard error. (Doubling each score's deviation from the uid's mean
  would instead bias it: scores are bounded, so voice clone at 0.80 of the best would read as 0.85.)
- Every validator sets weights every 100 blocks (its default), at its own phase; the epoch runs every 360
  blocks (the chain's default tempo). Commit-reveal (the chain's default, reveal period 1): the last weights a
  validator committed during a tempo are revealed at its epoch and used there; before then nobody sees them,
  so a weight copier can only copy a consensus at least one epoch old.
- The epoch masks a validator's weight for a uid registered since it last set weights (the chain's
  `outdated` mask) and restarts the bonds of uids registered since the last epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from audionet.benchmarks.incentive.population import Group
from audionet.lib.core import yuma

ROUND_S = 12.0  # the validator's default round interval, and one block
SAMPLE = 16  # the validator's default sample size
EPOCH_LENGTH = 100  # blocks between a validator's weight settings (its default)
TEMPO = 360  # blocks between epochs (the chain's default)
RESTART_S = 600.0  # how long the restarting validator is down
VALIDATOR_EVENTS_H = 2.0  # a restart, an added service and a fresh validator: this long after the miners' events
# Before `fine_from_h` the records only need to fill: COARSE rounds at a time, each validator asking COARSE x its
# sample of distinct uids once (the weights, epochs and bonds still run every round).
COARSE = 10


@dataclass(frozen=True)
class Role:
    name: str
    stake: float
    sample: int = SAMPLE  # uids it asks a round (4: its estimates carry twice the standard error)
    every: int = EPOCH_LENGTH  # blocks between its weight settings
    fresh: bool = False  # starts at the events with nothing
    restarts: bool = False  # is down for RESTART_S at the events, then resumes from its saved state
    adds: str | None = None  # a service it scores only from the events on
    copies: int = 0  # a weight copier: commits the consensus of this many epochs ago
    twin: str | None = None  # no stake; gets the named validator's answers, but neither restarts nor adds a service

    @property
    def honest(self) -> bool:
        """Judges and sets weights like a validator at its defaults, and scores every service throughout."""
        return not (self.fresh or self.copies or self.adds or self.twin or self.every != EPOCH_LENGTH)


VALIDATORS = (
    Role("honest A", 0.20),
    Role("2x noise A", 0.15, sample=SAMPLE // 4),
    Role("honest B", 0.12),
    Role("honest C", 0.10),
    Role("2x noise B", 0.08, sample=SAMPLE // 4),
    Role("restarts", 0.08, restarts=True),
    Role("adds music", 0.07, adds="music"),
    Role("lagging (every 3 tempos)", 0.07, every=3 * TEMPO),
    Role("fresh", 0.05, fresh=True),
    *(Role(f"copier, {k} tempo{'s' if k > 1 else ''} behind", 0.02, copies=k) for k in (1, 2, 3, 4)),
    # What the restarting validator and the one adding a service would have paid without their event.
    Role("twin of restarts", 0.0, twin="restarts"),
    Role("twin of adds music", 0.0, twin="adds music"),
)


class Scorer(Protocol):
    """A validator's way from answers to weights, for every simulated validator at once: weights per row (a
    service, or "all" for a curve that pays one weight over all services), then combined per mechanism."""

    label: str
    rows: tuple[str, ...]
    mechanisms: tuple[str, ...]  # what each mechanism pays, for tables

    def start(self, shape: tuple[int, int, int]): ...
    def tick(self, state, seconds: float) -> None: ...
    def observe(self, state, index: tuple, reward: np.ndarray) -> None: ...
    def forget(self, state, uids: np.ndarray) -> None: ...
    def weights(self, state, validator: int, serving: np.ndarray, scored: np.ndarray) -> np.ndarray: ...
    def combine(self, rows: np.ndarray) -> np.ndarray: ...


@dataclass
class Run:
    groups: list[Group]
    services: list[str]
    roles: tuple[Role, ...]
    mechanisms: tuple[str, ...]
    labels: np.ndarray  # group index per uid
    event_round: int  # the miners' events (a turned cheat, a drop, newcomers)
    validator_event_round: int  # the validators' (a restart, an added service, a fresh validator)
    event_epoch: int  # the first epoch after the miners' events
    incentive: np.ndarray  # [epoch, mechanism, uid]
    consensus: np.ndarray  # [epoch, mechanism, uid]
    trust: np.ndarray  # [epoch, mechanism, validator]
    dividends: np.ndarray  # [epoch, mechanism, validator]
    rows: tuple[str, ...]  # what the validators' weights are per (services, or "all")
    row_weights: np.ndarray  # [epoch, validator, row, uid]: the weights each validator committed, per row
    # per validator, each weight setting: (round, weights [mechanism, uid], weights [row, uid])
    settings: list[list[tuple[int, np.ndarray, np.ndarray]]] = field(default_factory=list)

    def uids(self, predicate: Callable[[Group], bool]) -> np.ndarray:
        chosen = [i for i, g in enumerate(self.groups) if predicate(g)]
        return np.flatnonzero(np.isin(self.labels, chosen))

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


@dataclass
class _Answers:
    """Per service: every uid's scores before and after the events, padded [phase, uid, width]."""

    table: np.ndarray
    length: np.ndarray  # [phase, uid]
    mean: np.ndarray  # [phase, uid]
    served: np.ndarray  # [phase, uid]


def _answers(groups: list[Group], service: str) -> _Answers:
    rows = {phase: [] for phase in (0, 1)}
    for g in groups:
        for phase, answers in ((0, g.answers), (1, g.later or g.answers)):
            rows[phase] += [answers.get(service, np.zeros(0))] * g.count
    width = max(len(r) for phase in rows.values() for r in phase)
    table = np.zeros((2, len(rows[0]), width))
    for phase, phase_rows in rows.items():
        for uid, r in enumerate(phase_rows):
            table[phase, uid, : len(r)] = r
    length = np.array([[len(r) for r in rows[p]] for p in (0, 1)])
    mean = np.array([[r.mean() if len(r) else 0.0 for r in rows[p]] for p in (0, 1)])
    return _Answers(table, np.maximum(length, 1), mean, length > 0)


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
    fine_from = int(fine_from_h * 3600 / ROUND_S)
    validator_event = event + int(VALIDATOR_EVENTS_H * 3600 / ROUND_S)
    answers = [_answers(groups, s) for s in services]
    changes = np.array([g.changes_h is not None or g.joins_h is not None for g in groups])[labels]
    newcomers = np.array([g.joins_h is not None for g in groups])[labels]
    phase = np.zeros(n, int)
    down = _outages(groups, labels, rounds, rng)
    sample = np.array([r.sample for r in roles])
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
    last_update = np.full(v_count, -1)
    registered = np.full(n, -1)
    bonds: list = [None] * m_count
    consensus: list[np.ndarray] = []
    out_incentive, out_trust, out_dividends = [], [], []
    settings: list[list] = [[] for _ in roles]
    last_epoch = 0
    for t in range(rounds):
        if t == event:
            phase[changes] = 1
            registered[newcomers] = t
            scorer.forget(state, np.flatnonzero(newcomers))
        batch = 1 if t >= fine_from else COARSE if t % COARSE == 0 else 0
        restarting = np.array(
            [r.restarts and validator_event <= t < validator_event + RESTART_S / ROUND_S for r in roles]
        )
        active = np.flatnonzero((t >= starts) & ~restarting)
        drawn = np.flatnonzero((t >= starts) & np.array([r.twin is None for r in roles]))
        scored = (
            np.array([[r.adds != s or t >= validator_event for s in services] for r in roles]) & ~restarting[:, None]
        )
        if batch:
            scorer.tick(state, batch * ROUND_S)
            _round(rng, answers, phase, down[t], scorer, state, drawn, sample * batch, scored, twins, n)
        for v in active:
            role = roles[v]
            if (t - starts[v] - offset[v]) % role.every:
                continue
            if role.copies:
                if len(consensus) < role.copies:
                    continue
                rows, weights = np.zeros(committed_rows[v].shape), yuma.normalise(consensus[-role.copies], axis=1)
            else:
                serving = np.stack([a.served[phase, np.arange(n)] for a in answers])
                rows = scorer.weights(state, v, serving, scored[v])
                weights = scorer.combine(rows)
            if weights.sum() == 0:
                continue
            committed[v], committed_rows[v], last_update[v] = weights, rows, t
            settings[v].append((t, weights.astype(np.float32), rows.astype(np.float32)))
        if (t + 1) % TEMPO == 0:
            stake = np.array([r.stake for r in roles]) * (last_update >= 0)
            fresh = registered >= last_epoch
            epochs = []
            for m in range(m_count):
                stored = yuma.quantize(committed[:, m]) * (last_update[:, None] > registered[None, :])
                epochs.append(yuma.epoch(stored, stake, bonds[m], fresh))
                bonds[m] = epochs[-1].bonds
            consensus.append(np.stack([e.consensus for e in epochs]))
            out_incentive.append(np.stack([e.incentive for e in epochs]))
            out_trust.append(np.stack([e.validator_trust for e in epochs]))
            out_dividends.append(np.stack([e.dividends for e in epochs]))
            out_rows.append(committed_rows.astype(np.float32))
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
    )


def _round(rng, answers, phase, down, scorer, state, drawn, sample, scored, twins, n) -> None:
    """Each validator in `drawn` asks `sample` distinct uids for every service they serve; it records the
    answers of the services it scores (none while it is down), its twin every answer."""
    most = int(sample.max())
    asked = np.argpartition(rng.random((drawn.size, n)), most - 1, axis=1)[:, :most]
    mine = np.arange(most)[None, :] < sample[drawn][:, None]  # a 4-uid validator asks its first 4
    rows, uids = np.repeat(drawn, most)[mine.ravel()], asked[mine]
    p = phase[uids]
    for k, a in enumerate(answers):
        served = a.served[p, uids]
        pick = (rng.random(uids.size) * a.length[p, uids]).astype(int)
        reward = np.where(down[uids], 0.0, a.table[p, uids, pick])
        ok = served & scored[rows, k]
        scorer.observe(state, (rows[ok], np.full(ok.sum(), k), uids[ok]), reward[ok])
        for w, v in twins:
            theirs = served & (rows == v)
            scorer.observe(state, (np.full(theirs.sum(), w), np.full(theirs.sum(), k), uids[theirs]), reward[theirs])


def _outages(groups, labels, rounds: int, rng) -> np.ndarray:
    """[round, uid]: True while a flaky uid is down (every answer fails)."""
    from audionet.benchmarks.incentive.population import OUTAGE_H

    down = np.zeros((rounds, len(labels)), bool)
    length = int(OUTAGE_H * 3600 / ROUND_S)
    for uid, label in enumerate(labels):
        every = groups[label].outage_every_h
        if every:
            starts = np.flatnonzero(rng.random(rounds) < ROUND_S / (every * 3600))
            for start in starts:
                down[start : start + length, uid] = True
    return down
