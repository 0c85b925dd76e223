"""Where the next requests should run: earliest-finish-time list scheduling.

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
from collections.abc import Sequence
from dataclasses import dataclass

MIN_SIZE = 0.1  # audio seconds: a request is never planned as free of cost


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
