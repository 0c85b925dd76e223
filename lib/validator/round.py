"""Turn one round's answers into rewards in [0, 1] with the Judge.

Answers are judged as they arrive (`score_as_answered`), in batches: per service, failed queries are
gated, everything else goes to the Judge's session for that service (gates, duplicates, evaluators; the
same path audionet-bench uses through `Judge.score`). The reward the EMA sees is the raw score itself: it is reproducible from
the audio and the verdict's seed (a miner can check it with audionet-score --seed) and does not depend
on who else was sampled; the incentive study found that a within-round rank only
adds noise (docs/scoring.md#from-scores-to-weights). Answer speed is not part of
the reward: slow answers are already cut off by the per-service timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.scoring.judge import Judge, Session
from audionet.lib.scoring.listening import secret_seed
from audionet.lib.validator.client import Answer
from audionet.lib.validator.state import finite_unit


@dataclass(frozen=True)
class Scored:
    answer: Answer
    reward: float  # what the EMA sees: the raw score, 0 when gated
    gate: Optional[str]  # why the reward is 0, or None
    score: float = 0.0  # raw 0..1 from the Judge
    components: dict[str, float] = field(default_factory=dict)
    gate_name: Optional[str] = None  # which gate fired ("no_answer" when the query itself failed)
    seed: Optional[int] = None  # the Judge's listening-noise seed (lib/scoring/listening.py): reproduces the verdict


class RoundScorer:
    """One round's answers, judged in batches as they arrive: each batch is gated, fingerprinted and checked
    for copies, then each of its services' evaluators runs once over what passed (a `Session` per service).
    `finish` settles copies within the round and gives each answer its `Scored`.
    One caller at a time (the validator runs it off the event loop)."""

    def __init__(
        self, judge: Judge, services: Mapping[str, object], measure=None, seeds: Callable[[], int] = secret_seed
    ):
        """`services`: name -> Service (lib.services) for every service among the answers; `seeds`: draws each
        verdict's listening-noise seed as its answer arrives (the validator's: secret randomness)."""
        self.judge, self.services, self.measure, self.seeds = judge, services, measure, seeds
        self.sessions: dict[str, Session] = {}
        self.answers: dict[str, list[Answer]] = {}

    def take(self, answers: Sequence[Answer]) -> None:
        for name in dict.fromkeys(a.service for a in answers):
            service = self.services[name]
            if name not in self.sessions:
                self.sessions[name] = self.judge.open(service.judging, measure=self.measure, seeds=self.seeds)
            mine = [a for a in answers if a.service == name]
            self.answers.setdefault(name, []).extend(mine)
            self.sessions[name].add(
                [service.job(a.request, a.audio if a.ok else None, f"uid {a.target.uid}") for a in mine]
            )
        for name in dict.fromkeys(a.service for a in answers):
            self.sessions[name].evaluate()

    def finish(self) -> list[Scored]:
        """Every answer's `Scored`, by service (in the order of `services`) and uid, whatever order they came in."""
        scored = []
        for name in (name for name in self.services if name in self.sessions):
            for answer, verdict in zip(self.answers[name], self.sessions[name].close()):
                gate = f"no valid answer: {answer.error}" if not answer.ok else verdict.gate
                gate_name = "no_answer" if not answer.ok else verdict.gate_name
                reward = 0.0 if gate else finite_unit(verdict.score)
                scored.append(Scored(answer, reward, gate, verdict.score, verdict.components, gate_name, verdict.seed))
        order = {name: n for n, name in enumerate(self.services)}
        return sorted(scored, key=lambda s: (order[s.answer.service], s.answer.target.uid))


def score_round(
    answers: list[Answer],
    judge: Judge,
    services: Mapping[str, object],
    measure=None,
    seeds: Callable[[], int] = secret_seed,
) -> list[Scored]:
    """A whole round at once (every answer already in)."""
    scorer = RoundScorer(judge, services, measure, seeds)
    scorer.take(answers)
    return scorer.finish()


async def score_as_answered(
    queries: Sequence[Awaitable[Answer]], scorer: RoundScorer
) -> tuple[list[Scored], float, float]:
    """Judge each answer as it comes in: whatever arrived while the last batch was judged is the next batch (off
    the event loop, so answers keep arriving meanwhile). The slowest miner holds the round only for its own
    answer. Nothing a miner sends makes a query raise (`MinerClient.query`: any failure is that miner's answer);
    one that raises all the same (a request that could not be drawn) fails the round (the others are cancelled). (the scores, seconds from the first
    query out to the last answer in, seconds spent judging)."""
    started, judging = time.perf_counter(), 0.0

    async def arrival(query: Awaitable[Answer]) -> tuple[Answer, float]:
        answer = await query
        return answer, time.perf_counter() - started

    pending = {asyncio.ensure_future(arrival(query)) for query in queries}
    last_in = 0.0
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            batch = [task.result() for task in done]
            last_in = max([last_in, *(at for _, at in batch)])
            begun = time.perf_counter()
            await asyncio.to_thread(scorer.take, [answer for answer, _ in batch])
            judging += time.perf_counter() - begun
        begun = time.perf_counter()
        scored = await asyncio.to_thread(scorer.finish)
        return scored, last_in, judging + time.perf_counter() - begun
    finally:
        for task in pending:
            task.cancel()
