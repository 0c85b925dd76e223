"""Turn one round's answers into rewards in [0, 1] with the Judge.

Per service: failed queries are gated, everything else goes to
`Judge.score` (gates, duplicates, evaluators; the same path audionet-bench
uses). The reward the EMA sees is the raw score itself: it is reproducible from
the audio alone (a miner can check it with audionet-score) and does not depend
on who else was sampled; the incentive study found that a within-round rank only
adds noise (docs/scoring.md#from-scores-to-weights). Answer speed is not part of
the reward: slow answers are already cut off by the per-service timeout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.scoring.judge import Judge
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


def score_round(answers: list[Answer], judge: Judge, services: Mapping[str, object], measure=None) -> list[Scored]:
    """`services`: name -> Service (lib.services) for every service among the answers."""
    scored: list[Optional[Scored]] = [None] * len(answers)
    for name in dict.fromkeys(a.service for a in answers):
        indices = [i for i, a in enumerate(answers) if a.service == name]
        service = services[name]
        jobs = [
            service.job(answers[i].request, answers[i].audio if answers[i].ok else None, f"uid {answers[i].target.uid}")
            for i in indices
        ]
        verdicts = judge.score(service.judging, jobs, measure=measure)
        for i, verdict in zip(indices, verdicts):
            answer = answers[i]
            gate = f"no valid answer: {answer.error}" if not answer.ok else verdict.gate
            name = "no_answer" if not answer.ok else verdict.gate_name
            reward = 0.0 if gate else finite_unit(verdict.score)
            scored[i] = Scored(answer, reward, gate, verdict.score, verdict.components, name)
    return scored  # type: ignore[return-value]
