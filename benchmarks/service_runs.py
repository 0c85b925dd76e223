"""One service on one device: generation runs (through the miner's own call, with per-stage timings from
`Backend.stage`), peak memory, the validator's verdict on every generated clip (timed evaluation and
quality) and a seeded determinism re-run. Every timed loop is the benchmarks' one helper, `timed_calls`."""

from __future__ import annotations

import resource
from collections.abc import Callable
from typing import TYPE_CHECKING, Optional

import numpy as np

from audionet.benchmarks.quality import determinism, quality_result
from audionet.benchmarks.timing import summarise, timed_calls
from audionet.benchmarks.workload import Workload
from audionet.lib.gpu import DeviceMonitor
from audionet.lib.timing import Timer
from audionet.models.base import Backend

if TYPE_CHECKING:  # judged runs only: a --no-eval run imports no scoring
    from audionet.benchmarks.evaluation import Evaluation


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
        result["evaluation"], verdicts = judge_runs(service, workloads, clips_per_run, evaluation, warmup, timer, tick)
        result["quality"] = quality_result(verdicts)
        again = run_once(service, backend, workloads[0])  # same requests, same seeds
        check = evaluation.verdicts(service, workloads[0].requests, again, Timer("bench-determinism").measure)
        result["quality"]["determinism"] = determinism((clips_per_run[0], verdicts[0]), (again, check))
        tick()
    return result


def judge_runs(
    service,
    workloads: list[Workload],
    clips_per_run: list[list],
    evaluation: Evaluation,
    warmup: int,
    timer: Timer,
    tick: Callable[[], None],
) -> tuple[dict, list]:
    """Judge each run's clips once, timed (after `warmup` untimed passes over the first run's); each
    evaluator inside the Judge is a timed stage."""

    def verdicts(run: int, measure=timer.measure) -> list:
        return evaluation.verdicts(service, workloads[run].requests, clips_per_run[run], measure)

    scratch = Timer("bench-warmup")
    timed_calls(lambda run: verdicts(run, scratch.measure), runs=0, warmup=warmup, tick=tick)
    judged = timed_calls(verdicts, runs=len(clips_per_run), device=evaluation.device, tick=tick)
    seconds = [sum(clip.seconds for clip in clips) for clips in clips_per_run]
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
