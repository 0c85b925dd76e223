"""The incentive study's answers: every uid's scores before and after the events (`answers_of`), one round's
draws of them by every validator (`Draw`), and the flaky uids' outages (`outages`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audionet.benchmarks.incentive.population import OUTAGE_H, Group
from audionet.benchmarks.incentive.roles import Role

ROUND_S = 12.0  # the validator's default round interval, and one block


@dataclass
class Answers:
    """Per service: every uid's scores before and after the events, padded [phase, uid, width]."""

    table: np.ndarray
    length: np.ndarray  # [phase, uid]
    mean: np.ndarray  # [phase, uid]
    served: np.ndarray  # [phase, uid]


def answers_of(groups: list[Group], service: str) -> Answers:
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
    return Answers(table, np.maximum(length, 1), mean, length > 0)


@dataclass
class Draw:
    """One round's answers: each validator asks its sample of distinct uids for every service they serve."""

    rng: np.random.Generator
    answers: list[Answers]
    phase: np.ndarray
    down: np.ndarray  # [uid]: fails every query this round
    serving: np.ndarray  # [service, uid]: serves it and has not declared itself down
    roles: tuple[Role, ...]
    twins: list[tuple[int, int]]

    def round(self, scorer, state, drawn: np.ndarray, batch: int, scored: np.ndarray, doubtful: np.ndarray) -> None:
        """Validators in `drawn` record the answers of the services they score (none while down), their twins
        every answer of the one they twin. A validator asks the uids it doubts first, in up to half its sample."""
        sample = np.array([r.sample for r in self.roles]) * batch
        spread = np.array([r.spread for r in self.roles])
        n = self.phase.size
        most = int(sample[drawn].max())
        keys = self.rng.random((drawn.size, n))
        doubt = np.where(doubtful[drawn], keys, np.inf)
        place = np.argsort(np.argsort(doubt, axis=1), axis=1)  # each doubted uid's turn among the doubted
        first = doubtful[drawn] & (place < (sample[drawn] // 2)[:, None])
        asked = np.argpartition(keys - first, most - 1, axis=1)[:, :most]
        mine = np.arange(most)[None, :] < sample[drawn][:, None]  # a 4-uid validator asks its first 4
        rows, uids = np.repeat(drawn, most)[mine.ravel()], asked[mine]
        p = self.phase[uids]
        failed = self.down[uids]
        for k, a in enumerate(self.answers):
            served = self.serving[k, uids]
            pick = (self.rng.random(uids.size) * a.length[p, uids]).astype(int)
            mean = a.mean[p, uids]
            reward = np.clip(mean + spread[rows] * (a.table[p, uids, pick] - mean), 0.0, 1.0)
            reward = np.where(failed, 0.0, reward)
            ok = served & scored[rows, k]
            who, whom, got, lost = [rows[ok]], [uids[ok]], [reward[ok]], [failed[ok]]
            for w, v in self.twins:  # distinct cells: one call records them all
                theirs = served & (rows == v)
                who.append(np.full(theirs.sum(), w))
                whom.append(uids[theirs])
                got.append(reward[theirs])
                lost.append(failed[theirs])
            who, whom = np.concatenate(who), np.concatenate(whom)
            scorer.observe(state, (who, np.full(who.size, k), whom), np.concatenate(got), np.concatenate(lost))


def outages(groups, labels, rounds: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """([round, uid] True while a flaky uid is down and fails, [round, uid] True while one says it is down)."""
    down = np.zeros((rounds, len(labels)), bool)
    declared = np.zeros((rounds, len(labels)), bool)
    length = int(OUTAGE_H * 3600 / ROUND_S)
    for uid, label in enumerate(labels):
        group = groups[label]
        if group.outage_every_h:
            into = declared if group.declares else down
            starts = np.flatnonzero(rng.random(rounds) < ROUND_S / (group.outage_every_h * 3600))
            for start in starts:
                into[start : start + length, uid] = True
    return down, declared
