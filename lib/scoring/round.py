"""Turn one round's answers into rewards in [0, 1].

Gates first (failed query, wrong length, silent, clipped, exact duplicate
across miners this round). A response that passes every gate gets a
*provisional* reward until model-based scoring lands: 0.5 for a valid clip
plus up to 0.5 for answering faster than the service timeout.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Optional

from lib.client import Answer
from lib.scoring.gates import audio_fingerprint, first_gate
from lib.scoring.state import finite_unit


@dataclass(frozen=True)
class Scored:
    answer: Answer
    reward: float
    gate: Optional[str]  # why the reward is 0, or None


def provisional_reward(latency_s: float, timeout_s: float) -> float:
    speed = max(0.0, 1.0 - latency_s / timeout_s) if timeout_s > 0 else 0.0
    return finite_unit(0.5 + 0.5 * speed)


def score_round(answers: list[Answer], timeouts: dict[str, float]) -> list[Scored]:
    gates: dict[int, Optional[str]] = {}
    owners: dict[str, list[int]] = defaultdict(list)
    for index, answer in enumerate(answers):
        if not answer.ok:
            gates[index] = f"no valid answer: {answer.error}"
            continue
        gates[index] = first_gate(answer.service, answer.request, answer.audio)
        owners[audio_fingerprint(answer.audio)].append(index)
    # Identical audio from different requests: nobody can tell who copied whom.
    for indices in owners.values():
        if len(indices) > 1:
            for index in indices:
                others = sorted({answers[i].target.uid for i in indices if i != index})
                gates[index] = gates[index] or f"exact duplicate of uid {', '.join(map(str, others))}"
    return [
        Scored(answer, 0.0 if gates[i] else provisional_reward(answer.latency_s, timeouts[answer.service]), gates[i])
        for i, answer in enumerate(answers)
    ]
