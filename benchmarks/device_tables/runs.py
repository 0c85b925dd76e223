"""One service on one device: generation runs (through the miner's own call, with per-stage timings from
`Backend.stage`), peak memory, the validator's verdict on every generated clip (timed evaluation and
quality), a seeded determinism re-run, and the parallel sweep. Every timed loop of a run is the benchmarks'
one helper, `timed_calls`.

A run's requests stay inside the wire protocol's limits, so the numbers are for requests a validator could
really send. Each service sizes its own requests (`Service.workload`): a target longer than one request
allows becomes equal segments that one run generates back to back, and the run's audio duration is the sum.
Speech text length follows the backend's own speaking rate (`Service.calibrate`).

The parallel sweep (docs/methodology.md#parallel-requests-per-gpu): throughput and latency with 1, 2, 4, ... requests in flight on one device,
through the miner's own call from a thread pool, as a replica's worker threads call it with
`--pool.parallel N`. The recommendation is the smallest count whose throughput is within 5% of the best:
more in flight past that point only adds latency."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from audionet.benchmarks.common.timing import summarise, timed_calls
from audionet.benchmarks.device_tables.quality import determinism, quality_result
from audionet.lib.core.devices import DeviceMonitor
from audionet.lib.core.timing import Timer
from audionet.models.base import Backend

if TYPE_CHECKING:  # judged runs only: a --no-eval run imports no scoring
    from audionet.benchmarks.common.evaluation import Evaluation


MODES = {
    "quick": 5.0,
    "medium": 30.0,
    "full": 60.0,
}  # seconds of audio per run (docs/methodology.md#per-gpu-service-tables)
GOOD_ENOUGH = 0.95  # the sweep recommends the fewest requests in flight within 5% of the best throughput


@dataclass(frozen=True)
class Workload:
    service: str
    target_seconds: float
    requests: tuple  # one run = these requests, in order


def make_workloads(service, backend, target_seconds: float, seed: int, count: int, sources=None) -> list[Workload]:
    """One workload per measured run: fresh prompts (and fresh references, drawn the way the
    validator draws them) from the run's own rng, so quality varies over runs as over rounds."""
    calibration = service.calibrate(backend)
    rngs = [np.random.default_rng([seed, run]) for run in range(max(1, count))]
    return [
        Workload(service.name, target_seconds, tuple(service.workload(rng, sources, target_seconds, calibration)))
        for rng in rngs
    ]


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def run_once(service, backend: Backend, workload: Workload) -> list:
    """Generate every request of the workload through the miner's own call (`Service.generate`)."""
    return [service.generate(backend, request) for request in workload.requests]


def stage_stats(timer: Timer, service: str, prefix: str) -> dict:
    return {
        key.stage: stats.as_dict()
        for key, stats in timer.snapshot().items()
        if key.service == service and key.stage.startswith(prefix + "/")
    }


def run_service(
    service,
    backend: Backend,
    workloads: list[Workload],
    *,
    runs: int,
    warmup: int,
    timer: Timer,
    evaluation: Optional[Evaluation],
    tick: Callable[[], None] = lambda: None,
    gpu_index: int = 0,
) -> dict:
    """Run r generates workloads[r] (warm-up runs workloads[0], their stages untimed); every run's clips
    are judged."""

    def generate(run: int) -> list:
        return run_once(service, backend, workloads[run])

    backend.measure = None  # warm-up stages are not part of the statistics
    warm = timed_calls(generate, runs=0, warmup=warmup, tick=tick)
    backend.measure = timer.stage_hook(service.name, sync=backend.device)  # GPU stage times are GPU times
    with DeviceMonitor(gpu_index) as monitor:
        measured = timed_calls(generate, runs=runs, device=backend.device, tick=tick)
    backend.measure = None
    clips_per_run = measured.results
    run_s = measured.seconds
    audio_s = [sum(clip.seconds for clip in clips) for clips in clips_per_run]
    per_audio_s = [t / a for t, a in zip(run_s, audio_s) if a > 0]
    result = {
        "service": service.name,
        "model": backend.model_id,
        "backend_device": backend.device,
        "preset": backend.preset,
        "target_seconds": workloads[0].target_seconds,
        "requests_per_run": len(workloads[0].requests),
        "generation": {
            "warmup_s": warm.warmup_s,
            "runs_s": run_s,
            "audio_s": audio_s,
            "stats": summarise(run_s).as_dict(),
            "latency_per_audio_s": summarise(per_audio_s).as_dict(),
            "audio_seconds": float(np.mean(audio_s)) if audio_s else 0.0,
            "rtf": sum(run_s) / sum(audio_s) if sum(audio_s) > 0 else None,
            "sequential_rps": len(workloads[0].requests) * runs / sum(run_s) if run_s else None,
            "stages": stage_stats(timer, service.name, "generation"),
        },
        "memory": {**monitor.result(), "peak_rss_gb": round(peak_rss_gb(), 3)},
    }
    if evaluation is not None:
        rounds = [(workload.requests, clips) for workload, clips in zip(workloads, clips_per_run)]
        result["evaluation"], verdicts = judge_runs(service, rounds, evaluation, warmup, timer, tick)
        result["quality"] = quality_result(verdicts)
        again = run_once(service, backend, workloads[0])  # same requests, same seeds
        check = evaluation.verdicts(service, workloads[0].requests, again, Timer("bench-determinism").measure)
        result["quality"]["determinism"] = determinism((clips_per_run[0], verdicts[0]), (again, check))
        tick()
    return result


def judge_runs(
    service, rounds: list[tuple], evaluation: Evaluation, warmup: int, timer: Timer, tick
) -> tuple[dict, list]:
    """Each run's (requests, clips) judged once, timed (`Evaluation.timed`): the evaluation timings, and
    the verdicts."""
    judged = evaluation.timed(service, rounds, timer, warmup, tick)
    seconds = [sum(clip.seconds for clip in clips) for _, clips in rounds]
    result = {
        "label": evaluation.label(),
        "runs_s": judged.seconds,
        "audio_seconds": float(np.mean(seconds)),
        "stats": judged.stats.as_dict(),
        "rtf": sum(judged.seconds) / sum(seconds) if sum(seconds) > 0 else None,
        "scores": [float(v.score) for run in judged.results for v in run],
        "stages": stage_stats(timer, service.name, "evaluation"),
    }
    return result, judged.results


def sweep(service, backend: Backend, request, levels: Sequence[int], per_worker: int, tick=lambda: None) -> dict:
    """`per_worker` x N copies of `request` with N in flight, for every N of `levels`."""
    rows = []
    for parallel in levels:
        total = parallel * per_worker

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
        rows.append(
            {
                "parallel": parallel,
                "requests": total,
                "wall_s": wall,
                "throughput_rps": total / wall,
                "audio_s_per_s": sum(r[1] for r in results) / wall,
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
