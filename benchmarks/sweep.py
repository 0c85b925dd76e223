"""Parallel sweep (seed 001): throughput and latency with 1, 2, 4, … requests
in flight on one device, through the miner's own call (`Service.generate`,
called from a thread pool as a replica's worker threads call it with
`--pool.parallel N`). The recommendation is the smallest count whose
throughput is within 5% of the best: more in flight past that point only
adds latency."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from audionet.benchmarks.timing import summarise
from audionet.models.base import Backend

GOOD_ENOUGH = 0.95


def sweep(
    service,
    backend: Backend,
    request,
    levels: Sequence[int],
    requests_per_level: Callable[[int], int],
    tick: Callable[[], None] = lambda: None,
) -> dict:
    rows = []
    for parallel in levels:
        total = requests_per_level(parallel)

        def one(_index: int) -> tuple[float, float]:
            started = time.perf_counter()
            audio = service.generate(backend, request)
            tick()
            return time.perf_counter() - started, audio.seconds

        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix=f"sweep{parallel}") as pool:
            started = time.perf_counter()
            results = list(pool.map(one, range(total)))
            wall = time.perf_counter() - started
        latencies = [r[0] for r in results]
        audio = sum(r[1] for r in results)
        rows.append(
            {
                "parallel": parallel,
                "requests": total,
                "wall_s": wall,
                "throughput_rps": total / wall,
                "audio_s_per_s": audio / wall,
                "latency": summarise(latencies).as_dict(),
                "latency_p95_s": float(np.percentile(latencies, 95)),
                "latencies_s": latencies,
            }
        )
    return {"rows": rows, "recommended_parallel": recommend(rows)}


def recommend(rows: list[dict]) -> int | None:
    if not rows:
        return None
    best = max(row["throughput_rps"] for row in rows)
    return min(row["parallel"] for row in rows if row["throughput_rps"] >= GOOD_ENOUGH * best)
