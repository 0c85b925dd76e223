"""Per-device service tables: generation (miner) and evaluation (validator) times per service, latency per
audio second, throughput, memory, quality, presets, per-stage breakdown and a parallel sweep, written to
`<out>/<device-slug>/` (one folder per GPU, docs/methodology.md#per-gpu-service-tables: gpu_info.json, benchmark_summary.json, tables.md, PNGs).
Every device of --pool.devices is measured on its own; `audionet-bench pool` adds the pool across them.

    audionet-bench device-tables --services tts,vc,music --mode quick --runs 5 --warmup 2 --parallel 1,2,4
    audionet-bench device-tables --weights random --tts.model hf:facebook/mms-tts-eng --pool.devices cuda:0,cuda:1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from audionet.benchmarks.common.devices import MeasuredDevice, add_device_flags
from audionet.benchmarks.common.flags import (
    add_service_flags,
    add_weights_flags,
    one_line_errors,
    study_parser,
    weighted_specs,
)
from audionet.benchmarks.common.results import command_line
from audionet.benchmarks.device_tables.runs import MODES
from audionet.lib.core.config import CommaList, positive_int
from audionet.lib.core.devices import environment
from audionet.lib.miner.pool import MINER_ONLY, PoolSettings
from audionet.lib.services import registry


def build_parser(prog: str = "audionet-bench device-tables") -> argparse.ArgumentParser:
    parser = study_parser(prog, __doc__)
    parser.add_argument("--tag", default="", help="result folder <device-slug>-<tag> (e.g. another backend set)")
    parser.add_argument(
        "--mode", choices=list(MODES), default="quick", help="audio per run: quick 5 s, medium 30 s, full 60 s"
    )
    parser.add_argument("--runs", type=positive_int, default=5, help="measured runs per service")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per service (excluded)")
    counts = CommaList(convert=positive_int, empty=True, what="count")
    parser.add_argument(
        "--parallel", type=counts, default="1,2,4", help="parallel request counts to sweep ('' = no sweep)"
    )
    parser.add_argument(
        "--sweep-rounds", type=positive_int, default=3, help="at least this many requests per worker at each level"
    )
    parser.add_argument(
        "--sweep-seconds",
        type=float,
        default=3.0,
        help="more requests per worker until one worker alone would be busy this long (max 50)",
    )
    parser.add_argument(
        "--presets",
        type=CommaList(allowed=registry.PRESET_NAMES, empty=True, what="preset"),
        default="",
        help="fast,balanced,quality: also measure these presets where a backend has them "
        "(kokoro-clone:, hf:musicgen); each gets timing and quality rows",
    )
    parser.add_argument("--no-eval", action="store_true", help="skip the evaluation timings")
    add_weights_flags(parser)
    add_service_flags(parser)  # prompts (e.g. VC references) drawn as the validator draws them
    PoolSettings.add_flags(parser, services=registry.all_services(), skip=MINER_ONLY, parallel=None)
    add_device_flags(parser)
    registry.BackendSettings.add_flags(parser, services=registry.all_services(), skip=("presets",))
    from audionet.models.eval.profiles import add_eval_flags

    add_eval_flags(parser)  # the validator's evaluator flags: the benchmark judges with the same models
    return parser


def per_service_ticks(args) -> int:
    """Progress ticks of one run_service call: runs, evaluations, the determinism re-run."""
    return (args.warmup + args.runs) * (1 if args.no_eval else 2) + (0 if args.no_eval else 1)


def plan_ticks(services: list[str], args, levels: list[int]) -> int:
    return len(services) * (per_service_ticks(args) + sum(p * args.sweep_rounds for p in levels))


def sweep_rounds(result: dict, args) -> int:
    """Requests per worker: enough that cheap requests still give a sweep worth reading."""
    generation = result["generation"]
    per_request = generation["stats"]["mean"] / result["requests_per_run"]
    wanted = math.ceil(args.sweep_seconds / per_request) if per_request > 0 else args.sweep_rounds
    return max(args.sweep_rounds, min(50, wanted))


def other_presets(backend, names) -> list[str]:
    """The requested presets the backend has, except the one it is loaded with (the main run)."""
    return [n for n in names if n in backend.presets and n != backend.preset]


def presets_result(service, spec: str, backend, names: list[str], run) -> dict:
    """The requested presets the backend has, each loaded and measured like the main run; the backend's own
    preset reuses the main run's numbers."""
    if not backend.presets:
        return {"note": "this backend has no presets"}
    if not names:
        return {"note": f"presets {', '.join(backend.presets)}: pass --presets to measure"}
    if not any(n in backend.presets for n in names):
        return {"note": f"none of {', '.join(names)} among its presets ({', '.join(backend.presets)})"}
    load = partial(service.load_backend, spec, device=backend.device)
    measured = {name: run(load(preset=name)) for name in other_presets(backend, names)}
    return {"default": backend.preset, "measured": measured}  # presets are never simulated


def judge(args, device: str):
    """The validator's Judge on --eval.devices (one device; auto: the first measured device) with the --eval.*
    models."""
    from audionet.benchmarks.common.evaluation import Evaluation, one_eval_device
    from audionet.lib.core.devices import resolve_device
    from audionet.models.eval.profiles import EvalSettings

    chosen = one_eval_device(args, "device-tables")
    eval_device = device if chosen == "auto" else resolve_device(chosen, flag="--eval.devices")
    specs = weighted_specs(EvalSettings.from_flags(args).specs(), args, eval_device)
    return Evaluation(device=eval_device, specs=specs)


@dataclass
class Bench:
    """One `device-tables` run: the flags, the services with their specs and prompt sources, the Judge (None with
    --no-eval), the sweep's levels, the progress bar, and every backend loaded (the pool study reuses them)."""

    args: argparse.Namespace
    command: str
    specs: dict[str, str]
    sources: dict
    evaluation: object
    tick: Callable[[], None]
    say: Callable[..., None]  # say(text, extra ticks)
    backends: dict = field(default_factory=dict)  # (device, slowdown, service) -> backend


def benchmark(args, command: str, extra_ticks: int = 0, after=None) -> list[str]:
    """Every distinct device of --pool.devices measured on its own (<out>/<label>/); `after(bench, summaries)`
    runs inside the same progress bar (the pool study); the folders written."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from audionet.benchmarks.common.devices import distinct, targets

    specs = weighted_specs(registry.BackendSettings.from_flags(args).specs(args.services), args)
    sources = registry.sources_from_flags(args, args.services)
    evaluation = None if args.no_eval else judge(args, targets(args)[0].device)
    measured = distinct(targets(args))
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        levels = sum(p * args.sweep_rounds for p in args.parallel)
        total = len(measured) * len(args.services) * (per_service_ticks(args) + levels) + extra_ticks
        task = progress.add_task("benchmark", total=total)

        def say(text: str, extra: int = 0):
            progress.update(task, description=text, total=progress.tasks[0].total + extra)

        bench = Bench(args, command, specs, sources, evaluation, lambda: progress.advance(task), say)
        summaries = {target.label: bench_device(bench, target) for target in measured}
        folders = [device_folder(args, label) for label in summaries]
        return folders + ([after(bench, summaries)] if after is not None else [])


def device_folder(args, label: str) -> str:
    return os.path.join(args.out, label + (f"-{args.tag}" if args.tag else ""))


def bench_device(bench: Bench, target: MeasuredDevice) -> dict:
    """One device: generation runs, evaluation, presets and the parallel sweep per service, written to its
    folder; its summary."""
    from audionet.benchmarks.common.devices import load
    from audionet.benchmarks.device_tables.plots import write_plots
    from audionet.benchmarks.device_tables.runs import make_workloads, run_service, sweep
    from audionet.benchmarks.device_tables.tables import render
    from audionet.lib.core.devices import cuda_index
    from audionet.lib.core.timing import Timer
    from audionet.models.eval.profiles import EvalSettings

    args, info, results, load_before = bench.args, target.info(), {}, os.getloadavg()
    timer = Timer("bench", device=info["slug"], window=100_000)
    for name in args.services:
        service, spec, where = registry.get(name), bench.specs[name], f"{target.label}: {name}"
        bench.say(f"{where}: loading {spec}")
        backend = bench.backends[(target.device, target.slowdown, name)] = load(
            service, spec, target, args.simulate_floor
        )
        workloads = make_workloads(service, backend, MODES[args.mode], args.seed, args.runs, bench.sources[name])
        run = partial(run_service, service, workloads=workloads, runs=args.runs, warmup=args.warmup, timer=timer)
        run = partial(run, evaluation=bench.evaluation, tick=bench.tick, gpu_index=cuda_index(target.device))
        bench.say(f"{where}: runs")
        result = run(backend)
        result.update(spec=spec, title=service.title, metrics=[list(m) for m in service.metrics])
        bench.say(f"{where}: presets", len(other_presets(backend, args.presets)) * per_service_ticks(args))
        result["presets"] = presets_result(service, spec, backend, list(args.presets), run)
        if args.parallel:
            rounds = sweep_rounds(result, args)
            extra = sum(args.parallel) * (rounds - args.sweep_rounds)
            bench.say(f"{where}: parallel sweep ({rounds} per worker)", extra)
            result["sweep"] = sweep(service, backend, workloads[0].requests[0], args.parallel, rounds, bench.tick)
        results[name] = result
    simulated = None if target.slowdown is None else {"slowdown": target.slowdown, "floor": args.simulate_floor}
    summary = {
        "slug": target.label,
        "device": info,
        "simulated": simulated,
        "environment": environment(),
        "mode": args.mode,
        "runs": args.runs,
        "warmup": args.warmup,
        "weights": args.weights,
        "timing_only": args.weights == "random",
        "parallel_levels": list(args.parallel),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": bench.command,
        "services": results,
        "load_average": {"start": list(load_before), "end": list(os.getloadavg())},
        "evaluation": bench.evaluation.describe() if bench.evaluation else None,
        "eval_profile": EvalSettings.from_flags(args).chosen_profile(),
    }
    folder = device_folder(args, target.label)
    os.makedirs(folder, exist_ok=True)
    for name, text in (
        ("gpu_info.json", json.dumps({**info, **environment()}, indent=2)),
        ("benchmark_summary.json", json.dumps(summary, indent=2)),
        ("tables.md", render(summary)),
    ):
        with open(os.path.join(folder, name), "w") as handle:
            handle.write(text)
    write_plots(summary, folder)
    return summary


def main(argv: list[str], prog: str = "audionet-bench device-tables") -> int:
    args = build_parser(prog).parse_args(argv)

    def run() -> int:
        for folder in benchmark(args, command_line(prog, argv)):
            print(f"results in {folder}: {', '.join(sorted(os.listdir(folder)))}")
        return 0

    return one_line_errors(prog, run)
