"""Where the next work should run: earliest-finish-time list scheduling over replicas of measured speed.
Shared by the miner's device pool (lib/miner/pool: generation) and the validator's evaluator replicas
(lib/scoring/replicas.py: evaluation).

Each replica has `parallel` slots. A slot is free now (ready in 0 s) or busy until its running
request is expected to end. Requests are taken in line order; each goes to the slot where it would
*finish* first (slot ready time + size x the replica's seconds per audio second); ties go to the
faster replica. A slow device therefore gets a request only when every faster slot is booked long
enough that the slow one still finishes first: never for a small burst, more and more as the line
grows (docs/methodology.md#parallel-requests-per-gpu: a GTX 1660 beside an RTX 3090 made 6 files slower, 49 s vs 40 s, and helped only
with many files).
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

MIN_SIZE = 0.1  # audio seconds: a request is never planned as free of cost
ALPHA = 0.3  # weight of the newest measurement in a replica's running average of its speed
CLIP = 2.0  # one measurement moves the average at most this factor up or down (a cold cache, a GC pause)
# How work is spread over replicas: WEIGHTED (earliest finish, `plan`: the miner's and the validator's), or
# ROUND_ROBIN (item i on replica i mod n: the equal split the benchmarks compare it with).
WEIGHTED, ROUND_ROBIN = "weighted", "round-robin"
POLICIES = (WEIGHTED, ROUND_ROBIN)


def check_policy(policy: str) -> str:
    """`policy`, or ValueError naming the ones there are."""
    if policy not in POLICIES:
        raise ValueError(f"unknown dispatch policy {policy!r}; use {', '.join(POLICIES)}")
    return policy


@dataclass(frozen=True)
class Slots:
    """One replica as the planner sees it."""

    ready_s: tuple[float, ...]  # per slot: 0.0 when free now, else the estimated seconds until it frees
    seconds_per_audio_s: float


def plan(replicas: Sequence[Slots], sizes: Sequence[float]) -> list[tuple[int, float]]:
    """(replica index, start in seconds from now) for each request, in order; `sizes` in audio seconds.
    A start of exactly 0.0 means a slot that is free now."""
    heaps = [sorted(replica.ready_s) for replica in replicas]  # a sorted list is a heap
    out: list[tuple[int, float]] = []
    for size in sizes:
        costs = [max(size, MIN_SIZE) * replica.seconds_per_audio_s for replica in replicas]
        best = min(
            (i for i, heap in enumerate(heaps) if heap),
            key=lambda i: (heaps[i][0] + costs[i], replicas[i].seconds_per_audio_s, i),  # noqa: B023 (used at once)
        )
        start = heapq.heapreplace(heaps[best], heaps[best][0] + costs[best])
        out.append((best, start))
    return out


class Speed:
    """Seconds of compute per second of audio: a running average (EMA) of this replica's own
    requests. Before its first request the replica has only a `prior` (its timed warm-up, in
    seconds), which `estimate` scales by the measured replicas' ratio of average to prior."""

    def __init__(self) -> None:
        self.value: Optional[float] = None
        self.prior: Optional[float] = None
        self.samples = 0

    def add(self, elapsed: float, audio_seconds: float) -> None:
        if audio_seconds <= 0 or elapsed < 0:
            return
        sample = elapsed / audio_seconds
        if self.value is None:
            self.value = sample
        else:
            sample = min(max(sample, self.value / CLIP), self.value * CLIP)
            self.value += ALPHA * (sample - self.value)
        self.samples += 1


def estimate(speed: Speed, everyone: Sequence[Speed]) -> float:
    """Seconds per audio second of one replica among `everyone`: measured, else its warm-up prior scaled like
    the measured replicas, else (nothing known) the fastest measured or 1: an unmeasured replica is tried,
    then measured."""
    if speed.value is not None:
        return speed.value
    measured = [s for s in everyone if s.value is not None]
    ratios = [s.value / s.prior for s in measured if s.prior]
    if speed.prior is not None and (ratios or not measured):
        return speed.prior * (statistics.median(ratios) if ratios else 1.0)
    return min((s.value for s in measured), default=1.0)
