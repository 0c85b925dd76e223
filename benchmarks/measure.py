"""Measure one service on one device: generation runs (timed through the
same `Timer` the miner uses, with per-stage timings from `Backend.stage`),
peak memory, and evaluation runs of the generated clips."""
from __future__ import annotations

import resource
import time
from typing import Callable, Optional

import numpy as np

from benchmarks.evaluation import Evaluation
from benchmarks.stats import summarise
from benchmarks.workload import CALIBRATION_TEXT, Workload, build
from lib.gpu import DeviceMonitor
from lib.miner_app import generate
from lib.timing import Timer
from models.base import Backend

REFERENCE_TEXT = "Please call Stella and ask her to bring these things with her from the store."


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def speaking_rate(backend: Backend) -> float:
    """Characters per audio second of a speech backend (from one calibration clip)."""
    audio = backend.synthesize(CALIBRATION_TEXT, seed=0)
    return len(CALIBRATION_TEXT) / max(audio.seconds, 0.1)


def make_workload(service: str, backend: Backend, target_seconds: float, seed: int, reference_tts: Optional[Backend]
                  ) -> Workload:
    rng = np.random.default_rng(seed)
    if service == "tts":
        return build(service, target_seconds, rng, chars_per_second=speaking_rate(backend))
    if service == "vc":
        # The reference is made the way a validator makes one: TTS of a sentence.
        reference = reference_tts.synthesize(REFERENCE_TEXT, seed=seed)
        rate = speaking_rate(reference_tts)
        return build(service, target_seconds, rng, chars_per_second=rate, reference=reference,
                     reference_text=REFERENCE_TEXT)
    return build(service, target_seconds, rng)


def run_once(backend: Backend, workload: Workload) -> tuple[list, float]:
    clips = [generate(backend, request) for request in workload.requests]
    return clips, sum(clip.seconds for clip in clips)


def stage_stats(timer: Timer, service: str, prefix: str) -> dict:
    return {key.stage: stats.as_dict() for key, stats in timer.snapshot().items()
            if key.service == service and key.stage.startswith(prefix + "/")}


def measure_service(service: str, backend: Backend, workload: Workload, *, runs: int, warmup: int, timer: Timer,
                    evaluation: Optional[Evaluation], tick: Callable[[], None] = lambda: None,
                    gpu_index: int = 0) -> dict:
    warmup_s = []
    backend.measure = None  # warm-up stages are not part of the statistics
    for _ in range(warmup):
        started = time.perf_counter()
        run_once(backend, workload)
        warmup_s.append(time.perf_counter() - started)
        tick()
    backend.measure = timer.stage_hook(service)
    run_s, audio_s, last_clips = [], [], []
    with DeviceMonitor(gpu_index) as monitor:
        for _ in range(runs):
            with timer.measure(service, "generation") as timing:
                last_clips, seconds = run_once(backend, workload)
                timing.audio_seconds = seconds
            run_s.append(timing.elapsed)
            audio_s.append(seconds)
            tick()
    backend.measure = None
    per_audio_s = [t / a for t, a in zip(run_s, audio_s) if a > 0]
    result = {
        "service": service, "model": backend.model_id, "backend_device": backend.device,
        "target_seconds": workload.target_seconds, "requests_per_run": len(workload.requests),
        "generation": {
            "warmup_s": warmup_s, "runs_s": run_s, "audio_s": audio_s, "stats": summarise(run_s).as_dict(),
            "latency_per_audio_s": summarise(per_audio_s).as_dict(),
            "audio_seconds": float(np.mean(audio_s)) if audio_s else 0.0,
            "rtf": sum(run_s) / sum(audio_s) if sum(audio_s) > 0 else None,
            "sequential_rps": len(workload.requests) * runs / sum(run_s) if run_s else None,
            "stages": stage_stats(timer, service, "generation"),
        },
        "memory": {**monitor.result(), "peak_rss_gb": round(peak_rss_gb(), 3)},
    }
    if evaluation is not None:
        result["evaluation"] = measure_evaluation(service, workload, last_clips, evaluation, runs, warmup, timer, tick)
    return result


def measure_evaluation(service: str, workload: Workload, clips: list, evaluation: Evaluation, runs: int,
                       warmup: int, timer: Timer, tick: Callable[[], None]) -> dict:
    """Evaluate the last run's clips `runs` times (after `warmup` untimed passes)."""
    scratch = Timer("bench-warmup")
    for _ in range(warmup):
        evaluation.evaluate(service, workload.requests, clips, scratch.measure)
        tick()
    seconds = sum(clip.seconds for clip in clips)
    run_s, scores = [], []
    for _ in range(runs):
        with timer.measure(service, "evaluation", audio_seconds=seconds) as timing:
            scores = evaluation.evaluate(service, workload.requests, clips, timer.measure)
        run_s.append(timing.elapsed)
        tick()
    return {"label": evaluation.label(service), "runs_s": run_s, "audio_seconds": seconds, "stats": summarise(run_s).as_dict(),
            "rtf": sum(run_s) / (seconds * len(run_s)) if seconds > 0 and run_s else None,
            "scores": [float(s) for s in scores], "stages": stage_stats(timer, service, "evaluation")}
