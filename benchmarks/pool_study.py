"""Pool study (seed 001, heterogeneous devices): bursts of N requests sent at once through the
miner's own scheduler (`audionet.lib.pool`: its stake-ordered line and device dispatch), for every single device alone, all devices with round-robin dispatch
(the seed-001 client), and all devices with the miner's speed-weighted dispatch. Measured side by
side in one run: the same requests, each configuration after a fresh warm-up calibration.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from audionet.benchmarks.stats import summarise
from audionet.lib.pool import Pool, Replica
from audionet.lib.pool.replica import Speed
from audionet.lib.timing import Timer

WEIGHTED, ROUND_ROBIN = "weighted", "round-robin"
STUDY_LINE = 10_000


async def burst(pool: Pool, name: str, requests: Sequence) -> dict:
    """Send every request at once (in order, equal stake) as validators' queries reach a miner."""

    async def one(request) -> tuple[float, str, float]:
        started = time.perf_counter()
        result = await pool.run(name, request, priority=0.0)
        return time.perf_counter() - started, result.label, result.audio.seconds

    started = time.perf_counter()
    results = await asyncio.gather(*(one(request) for request in requests))
    return {
        "makespan_s": time.perf_counter() - started,
        "latencies_s": [r[0] for r in results],
        "served": dict(Counter(r[1] for r in results)),
        "audio_s": sum(r[2] for r in results),
    }


def fresh_pool(name: str, replicas: Sequence[Replica], policy: str, timer: Timer | None = None) -> Pool:
    """A pool over `replicas` that starts from nothing known: new speed estimates, a timed warm-up."""
    for replica in replicas:
        replica.speed, replica.served, replica.failed = Speed(), 0, 0
    # every request of a burst waits its turn: the line is as long as the study's longest burst
    pool = Pool(
        {name: list(replicas)}, timer or Timer("bench-pool", device="pool"), policy=policy, max_waiting=STUDY_LINE
    )
    pool.calibrate()
    return pool


def configurations(replicas: Sequence[Replica]) -> list[tuple[str, list[Replica], str]]:
    """(label, replicas, policy): each device alone, then all with round-robin, then all weighted."""
    alone = [(f"{r.label} alone", [r], WEIGHTED) for r in replicas]
    everyone = " + ".join(r.label for r in replicas)
    return alone + [(everyone, list(replicas), ROUND_ROBIN), (everyone, list(replicas), WEIGHTED)]


def study(
    service,
    replicas: Sequence[Replica],
    make_requests: Callable[[int, int], list],
    batches: Sequence[int],
    rounds: int,
    tick: Callable[[], None] = lambda: None,
) -> dict:
    """Every configuration at every burst size, `rounds` times; `make_requests(n, round)` -> n requests."""
    rows = []
    for label, members, policy in configurations(replicas):
        pool = fresh_pool(service.name, members, policy)
        for n in batches:
            runs = [asyncio.run(burst(pool, service.name, make_requests(n, r))) for r in range(rounds)]
            for _ in runs:
                tick()
            latencies = [x for run in runs for x in run["latencies_s"]]
            served = sum((Counter(run["served"]) for run in runs), Counter())
            rows.append(
                {
                    "configuration": label,
                    "devices": [r.label for r in members],
                    "parallel": [r.parallel for r in members],
                    "policy": policy,
                    "batch": n,
                    "makespan": summarise([run["makespan_s"] for run in runs], drop_outliers=False).as_dict(),
                    "makespans_s": [run["makespan_s"] for run in runs],
                    "latency_mean_s": float(np.mean(latencies)),
                    "latency_p95_s": float(np.percentile(latencies, 95)),
                    "served": {r.label: served.get(r.label, 0) for r in members},
                    "audio_s_per_s": sum(run["audio_s"] for run in runs) / sum(run["makespan_s"] for run in runs),
                }
            )
    return {
        "service": service.name,
        "title": service.title,
        "model": replicas[0].model_id,
        "devices": [{"label": r.label, "device": r.device, "parallel": r.parallel} for r in replicas],
        "batches": list(batches),
        "rounds": rounds,
        "rows": rows,
        "findings": findings(rows, [r.label for r in replicas]),
    }


def _row(rows: list[dict], batch: int, policy: str, devices: list[str]) -> dict:
    return next(r for r in rows if r["batch"] == batch and r["policy"] == policy and r["devices"] == devices)


def findings(rows: list[dict], labels: list[str]) -> list[dict]:
    """Per burst size: weighted against round-robin and against the best single device (mean makespans)."""
    out = []
    for batch in sorted({r["batch"] for r in rows}):
        weighted = _row(rows, batch, WEIGHTED, labels)["makespan"]["mean"]
        robin = _row(rows, batch, ROUND_ROBIN, labels)["makespan"]["mean"]
        alone = {label: _row(rows, batch, WEIGHTED, [label])["makespan"]["mean"] for label in labels}
        best = min(alone, key=alone.get)
        served = _row(rows, batch, WEIGHTED, labels)["served"]
        out.append(
            {
                "batch": batch,
                "others_served": sum(n for label, n in served.items() if label != best),
                "weighted_s": weighted,
                "round_robin_s": robin,
                "best_alone": best,
                "best_alone_s": alone[best],
                "weighted_vs_round_robin": weighted / robin,
                "weighted_vs_best_alone": weighted / alone[best],
            }
        )
    return out
