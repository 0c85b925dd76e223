"""Per-device service benchmark: generation (miner) and evaluation (validator)
times per service, latency per audio second, throughput, memory, per-stage
breakdown and a parallel sweep, written to `<out>/<device-slug>/`.

    audionet-bench --services tts,vc,music --mode quick --runs 5 --warmup 2 --parallel 1,2,4
    python -m benchmarks.run --weights random --tts.model hf:facebook/mms-tts-eng --device cuda
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

from lib.config import flag, positive_int
from lib.errors import BackendError, ConfigError
from models.registry import DEFAULT_SPECS

DEFAULT_OUT = os.path.join("benchmarks", "results")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="audionet-bench", description=__doc__.split("\n")[0])
    parser.add_argument("--services", default="tts,vc,music", help="comma-separated subset of tts,vc,music")
    parser.add_argument("--mode", choices=["quick", "balanced", "full"], default="quick",
                        help="audio per run: quick 5 s, balanced 30 s, full 60 s")
    parser.add_argument("--runs", type=positive_int, default=5, help="measured runs per service")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per service (excluded)")
    parser.add_argument("--parallel", default="1,2,4", help="parallel request counts to sweep ('' = no sweep)")
    parser.add_argument("--sweep-rounds", type=positive_int, default=3,
                        help="at least this many requests per worker at each level")
    parser.add_argument("--sweep-seconds", type=float, default=3.0,
                        help="more requests per worker until one worker alone would be busy this long (max 50)")
    parser.add_argument("--weights", choices=["pretrained", "random"], default="pretrained",
                        help="random: same full-size architectures with random weights (timing only)")
    parser.add_argument("--cache-dir", default=os.path.expanduser("~/.cache/audionet/random-weights"),
                        help="where --weights random builds its models")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N")
    parser.add_argument("--presets", default="",
                        help="fast,balanced,quality: also measure these presets where a backend has them "
                             "(kokoro-clone:, hf:musicgen); each gets timing and quality rows")
    parser.add_argument("--no-eval", action="store_true", help="skip the evaluation timings")
    parser.add_argument("--seed", type=int, default=0, help="seed for prompts and generation")
    parser.add_argument("--out", default=DEFAULT_OUT, help="results root; files go to <out>/<device-slug>/")
    for service, spec in DEFAULT_SPECS.items():
        flag(parser, f"{service}.model", default=spec, help=f"{service} backend spec")
    from models.eval.registry import add_eval_flags

    add_eval_flags(parser)  # the validator's evaluator flags: the benchmark judges with the same models
    from lib.references import add_reference_flags

    add_reference_flags(parser)  # VC references drawn as the validator draws them
    return parser


def resolve_specs(specs: dict[str, str], weights: str, cache_dir: str) -> dict[str, str]:
    """--weights random: each hf:<known id> becomes the same architecture with random weights."""
    if weights == "pretrained":
        return specs
    from models.hf.random_weights import random_spec

    return {service: random_spec(spec, cache_dir) for service, spec in specs.items()}


def environment() -> dict:
    info = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda if torch.cuda.is_available() else None
    except ImportError:
        pass
    return info


def per_service_ticks(args) -> int:
    """Progress ticks of one measure_service call: runs, evaluations, the determinism re-run."""
    return (args.warmup + args.runs) * (1 if args.no_eval else 2) + (0 if args.no_eval else 1)


def plan_ticks(services: list[str], args, levels: list[int]) -> int:
    return len(services) * (per_service_ticks(args) + sum(p * args.sweep_rounds for p in levels))


def sweep_rounds(result: dict, args) -> int:
    """Requests per worker: enough that cheap requests still give a sweep worth reading."""
    generation = result["generation"]
    per_request = generation["stats"]["mean"] / result["requests_per_run"]
    wanted = math.ceil(args.sweep_seconds / per_request) if per_request > 0 else args.sweep_rounds
    return max(args.sweep_rounds, min(50, wanted))


def other_presets(backend, names: list[str]) -> list[str]:
    """The requested presets the backend has, except the one it is loaded with (the main run)."""
    return [n for n in names if n in backend.presets and n != backend.preset]


def measure_presets(service: str, spec: str, backend, names: list[str], measure) -> dict:
    """The requested presets the backend has, each loaded and measured like the main run;
    the backend's own preset reuses the main run's numbers."""
    from models.registry import load_backend

    if not backend.presets:
        return {"note": "this backend has no presets"}
    if not any(n in backend.presets for n in names):
        return {"note": f"none of {', '.join(names)} among its presets ({', '.join(backend.presets)})"}
    measured = {name: measure(load_backend(service, spec, device=backend.device, preset=name))
                for name in other_presets(backend, names)}
    return {"default": backend.preset, "measured": measured}


def benchmark(args, argv: list[str]) -> tuple[str, dict]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from benchmarks.evaluation import Evaluation
    from benchmarks.measure import make_workloads, measure_service
    from benchmarks.plots import write_plots
    from benchmarks.sweep import sweep
    from benchmarks.tables import render
    from benchmarks.workload import MODES
    from lib.gpu import cuda_index, describe_device, resolve_device
    from lib.timing import Timer
    from models.registry import load_backend

    services = [s.strip() for s in args.services.split(",") if s.strip()]
    if not services or set(services) - set(DEFAULT_SPECS):
        raise ConfigError("--services takes a comma-separated subset of tts,vc,music")
    try:
        levels = [int(p) for p in args.parallel.split(",") if p.strip()]
    except ValueError:
        raise ConfigError(f"--parallel takes counts like 1,2,4, got {args.parallel!r}") from None
    if any(p < 1 for p in levels):
        raise ConfigError("--parallel counts must be at least 1")
    device = resolve_device(args.device)
    info = describe_device(device)
    specs = resolve_specs({s: getattr(args, f"{s}_model") for s in services}, args.weights, args.cache_dir)
    timer = Timer("bench", device=info.slug, window=100_000)
    if "vc" in services:
        from lib.references import references_from_args

        references = references_from_args(args)
    else:
        references = None
    from models.eval.registry import specs_from_args

    eval_device = device if args.eval_device == "auto" else resolve_device(args.eval_device)
    evaluation = None if args.no_eval else Evaluation(device=eval_device, specs=specs_from_args(args))
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    results = {}
    load_before = os.getloadavg()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("benchmark", total=plan_ticks(services, args, levels))

        def tick():
            progress.advance(task)

        for service in services:
            progress.update(task, description=f"{service}: loading {specs[service]}")
            backend = load_backend(service, specs[service], device=device)
            workloads = make_workloads(service, backend, MODES[args.mode], args.seed, args.runs, references)

            def measure(backend_, service=service, workloads=workloads):
                return measure_service(service, backend_, workloads, runs=args.runs, warmup=args.warmup, timer=timer,
                                       evaluation=evaluation, tick=tick, gpu_index=cuda_index(device))

            progress.update(task, description=f"{service}: runs")
            result = measure(backend)
            result["spec"] = specs[service]
            if presets:
                progress.update(task, description=f"{service}: presets")
                extra = len(other_presets(backend, presets))
                progress.update(task, total=progress.tasks[0].total + extra * per_service_ticks(args))
                result["presets"] = measure_presets(service, specs[service], backend, presets, measure)
            else:
                result["presets"] = ({"note": "this backend has no presets"} if not backend.presets
                                     else {"note": f"presets {', '.join(backend.presets)}: pass --presets to measure"})
            if levels:
                rounds = sweep_rounds(result, args)
                progress.update(task, description=f"{service}: parallel sweep ({rounds} per worker)",
                                total=progress.tasks[0].total + sum(levels) * (rounds - args.sweep_rounds))
                result["sweep"] = sweep(backend, workloads[0].requests[0], levels, lambda p, per_worker=rounds: p * per_worker, tick)
            results[service] = result
    summary = {
        "slug": info.slug, "device": info.as_dict(), "environment": environment(), "mode": args.mode,
        "runs": args.runs, "warmup": args.warmup, "weights": args.weights, "timing_only": args.weights == "random",
        "parallel_levels": levels, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(["audionet-bench", *argv]), "services": results,
        "load_average": {"start": list(load_before), "end": list(os.getloadavg())},
        "evaluation": evaluation.describe() if evaluation else None,
    }
    folder = os.path.join(args.out, info.slug)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "gpu_info.json"), "w") as handle:
        json.dump({**info.as_dict(), **environment()}, handle, indent=2)
    with open(os.path.join(folder, "benchmark_summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    with open(os.path.join(folder, "tables.md"), "w") as handle:
        handle.write(render(summary))
    write_plots(summary, folder)
    return folder, summary


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        folder, _summary = benchmark(args, argv)
    except (ConfigError, BackendError) as error:
        print(f"audionet-bench: {error}", file=sys.stderr)
        return 2
    print(f"results in {folder}: tables.md, benchmark_summary.json, gpu_info.json, *.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
