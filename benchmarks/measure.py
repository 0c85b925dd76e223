"""Measure one service on one device: generation runs (timed through the
same `Timer` the miner uses, with per-stage timings from `Backend.stage`),
peak memory, the validator's verdict on every generated clip (timed
evaluation + quality) and a seeded determinism re-run."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

import numpy as np

from audionet.benchmarks.quality import determinism, quality_result
from audionet.benchmarks.stats import summarise
from audionet.benchmarks.workload import Workload
from audionet.lib.gpu import DeviceMonitor
from audionet.lib.timing import Timer
from audionet.models.base import Backend

if TYPE_CHECKING:  # judged runs only: a --no-eval run imports no scoring
    from audionet.benchmarks.evaluation import Evaluation


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def run_once(service, backend: Backend, workload: Workload) -> tuple[list, float]:
    """Generate every request of the workload through the miner's own call (`Service.generate`)."""
    clips = [service.generate(backend, request) for request in workload.requests]
    return clips, sum(clip.seconds for clip in clips)


def stage_stats(timer: Timer, service: str, prefix: str) -> dict:
    return {
        key.stage: stats.as_dict()
        for key, stats in timer.snapshot().items()
        if key.service == service and key.stage.startswith(prefix + "/")
    }


def measure_service(
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
    """Run r generates workloads[r] (warm-up runs use workloads[0]); every run's clips are judged."""
    warmup_s = []
    backend.measure = None  # warm-up stages are not part of the statistics
    for _ in range(warmup):
        started = time.perf_counter()
        run_once(service, backend, workloads[0])
        warmup_s.append(time.perf_counter() - started)
        tick()
    backend.measure = timer.stage_hook(service.name, sync=backend.device)  # GPU stage times are GPU times
    run_s, audio_s, clips_per_run = [], [], []
    with DeviceMonitor(gpu_index) as monitor:
        for run in range(runs):
            with timer.measure(service.name, "generation", sync=backend.device) as timing:
                clips, seconds = run_once(service, backend, workloads[run])
                timing.audio_seconds = seconds
            run_s.append(timing.elapsed)
            audio_s.append(seconds)
            clips_per_run.append(clips)
            tick()
    backend.measure = None
    per_audio_s = [t / a for t, a in zip(run_s, audio_s) if a > 0]
    result = {
        "service": service.name,
        "model": backend.model_id,
        "backend_device": backend.device,
        "preset": backend.preset,
        "target_seconds": workloads[0].target_seconds,
        "requests_per_run": len(workloads[0].requests),
        "generation": {
            "warmup_s": warmup_s,
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
        result["evaluation"], verdicts = measure_evaluation(
            service, workloads, clips_per_run, evaluation, warmup, timer, tick
        )
        result["quality"] = quality_result(verdicts)
        again = run_once(service, backend, workloads[0])[0]  # same requests, same seeds
        check = evaluation.verdicts(service, workloads[0].requests, again, Timer("bench-determinism").measure)
        result["quality"]["determinism"] = determinism((clips_per_run[0], verdicts[0]), (again, check))
        tick()
    return result


def measure_evaluation(
    service,
    workloads: list[Workload],
    clips_per_run: list[list],
    evaluation: Evaluation,
    warmup: int,
    timer: Timer,
    tick: Callable[[], None],
) -> tuple[dict, list]:
    """Judge each run's clips once, timed (after `warmup` untimed passes over the first run's)."""
    scratch = Timer("bench-warmup")
    for _ in range(warmup):
        evaluation.verdicts(service, workloads[0].requests, clips_per_run[0], scratch.measure)
        tick()
    run_s, seconds, verdicts = [], [], []
    for workload, clips in zip(workloads, clips_per_run):
        seconds.append(sum(clip.seconds for clip in clips))
        with timer.measure(service.name, "evaluation", audio_seconds=seconds[-1]) as timing:
            verdicts.append(evaluation.verdicts(service, workload.requests, clips, timer.measure))
        run_s.append(timing.elapsed)
        tick()
    result = {
        "label": evaluation.label(),
        "runs_s": run_s,
        "audio_seconds": float(np.mean(seconds)),
        "stats": summarise(run_s).as_dict(),
        "rtf": sum(run_s) / sum(seconds) if sum(seconds) > 0 else None,
        "scores": [float(v.score) for run in verdicts for v in run],
        "stages": stage_stats(timer, service.name, "evaluation"),
    }
    return result, verdicts
