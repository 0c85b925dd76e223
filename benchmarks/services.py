"""Per-device service tables: generation (miner) and evaluation (validator) times per service, latency per
audio second, throughput, memory, quality, presets, per-stage breakdown and a parallel sweep, written to
`<out>/<device-slug>/` (seed 003's per-GPU folder: gpu_info.json, benchmark_summary.json, tables.md, PNGs).
Every device of --pool.devices is measured on its own; `audionet-bench pool` adds the pool across them.

    audionet-bench services --services tts,vc,music --mode quick --runs 5 --warmup 2 --parallel 1,2,4
    audionet-bench services --weights random --tts.model hf:facebook/mms-tts-eng --pool.devices cuda:0,cuda:1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

from audionet.benchmarks.devices import MeasuredDevice, add_device_flags
from audionet.benchmarks.results import RESULTS_DIR, command_line
from audionet.lib import services as registry
from audionet.lib.config import CommaList, Parser, positive_int
from audionet.lib.errors import BackendError, ConfigError, exit_code
from audionet.lib.gpu import environment
from audionet.lib.pool import add_pool_flags


def build_parser(prog: str = "audionet-bench services") -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument(
        "--services",
        type=registry.service_list,
        default=",".join(registry.names()),
        help=f"comma-separated subset of {','.join(registry.names())}",
    )
    parser.add_argument(
        "--mode",
        choices=["quick", "balanced", "full"],
        default="quick",
        help="audio per run: quick 5 s, balanced 30 s, full 60 s",
    )
    parser.add_argument("--runs", type=positive_int, default=5, help="measured runs per service")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per service (excluded)")
    parser.add_argument(
        "--parallel",
        type=CommaList(convert=positive_int, empty=True, what="count"),
        default="1,2,4",
        help="parallel request counts to sweep ('' = no sweep)",
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
        "--weights",
        choices=["pretrained", "random"],
        default="pretrained",
        help="random: same full-size architectures with random weights (timing only)",
    )
    parser.add_argument(
        "--cache-dir",
        default=os.path.expanduser("~/.cache/audionet/random-weights"),
        help="where --weights random builds its models",
    )
    parser.add_argument(
        "--presets",
        type=CommaList(allowed=registry.PRESETS, empty=True, what="preset"),
        default="",
        help="fast,balanced,quality: also measure these presets where a backend has them "
        "(kokoro-clone:, hf:musicgen); each gets timing and quality rows",
    )
    parser.add_argument("--no-eval", action="store_true", help="skip the evaluation timings")
    parser.add_argument("--seed", type=int, default=0, help="seed for prompts and generation")
    parser.add_argument("--out", default=RESULTS_DIR, help="results root; files go to <out>/<device-slug>/")
    parser.add_argument("--tag", default="", help="result folder <device-slug>-<tag> (e.g. another backend set)")
    add_pool_flags(parser, backends=False, parallel_default=None)
    add_device_flags(parser)
    registry.add_backend_flags(parser, presets=False)
    from audionet.models.eval.profiles import add_eval_flags

    add_eval_flags(parser)  # the validator's evaluator flags: the benchmark judges with the same models
    for service in registry.all_services():
        service.add_flags(parser)  # prompts (e.g. VC references) drawn as the validator draws them
    return parser


def resolve_specs(specs: dict[str, str], weights: str, cache_dir: str) -> dict[str, str]:
    """--weights random: each hf:<known id> becomes the same architecture with random weights."""
    if weights == "pretrained":
        return specs
    from audionet.models.hf.random_weights import random_spec

    return {service: random_spec(spec, cache_dir) for service, spec in specs.items()}


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


def other_presets(backend, names: list[str]) -> list[str]:
    """The requested presets the backend has, except the one it is loaded with (the main run)."""
    return [n for n in names if n in backend.presets and n != backend.preset]


def run_presets(service, spec: str, backend, names: list[str], run) -> dict:
    """The requested presets the backend has, each loaded and measured like the main run;
    the backend's own preset reuses the main run's numbers."""
    if not backend.presets:
        return {"note": "this backend has no presets"}
    if not any(n in backend.presets for n in names):
        return {"note": f"none of {', '.join(names)} among its presets ({', '.join(backend.presets)})"}
    measured = {
        name: run(service.load_backend(spec, device=backend.device, preset=name))  # never simulated
        for name in other_presets(backend, names)
    }
    return {"default": backend.preset, "measured": measured}


def judge(args, device: str):
    """The validator's Judge on --eval.device (auto: the first measured device) with the --eval.* models."""
    from audionet.benchmarks.evaluation import Evaluation, evaluator_specs
    from audionet.lib.gpu import resolve_device
    from audionet.models.eval.profiles import specs_from_args

    eval_device = device if args.eval_device == "auto" else resolve_device(args.eval_device, flag="--eval.device")
    specs = evaluator_specs(specs_from_args(args), args.weights, args.cache_dir, eval_device)
    return Evaluation(device=eval_device, specs=specs)


def progress_bar():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, transient=False)


def prepare(args) -> tuple[list, dict, dict, object]:
    """The services, their backend specs, their prompt sources and the Judge (None with --no-eval)."""
    from audionet.benchmarks.devices import targets

    services = list(args.services)
    specs = resolve_specs(registry.backend_specs(args, services), args.weights, args.cache_dir)
    sources = {name: registry.get(name).open_sources(args) for name in services}
    evaluation = None if args.no_eval else judge(args, targets(args)[0].device)
    return services, specs, sources, evaluation


def benchmark(args, command: str, extra_ticks: int = 0, after=None) -> list[str]:
    """Every distinct device of --pool.devices measured on its own (<out>/<label>/); `after(measured, context)`
    runs inside the same progress bar (the pool study); the folders written."""
    from audionet.benchmarks.devices import distinct, targets

    services, specs, sources, evaluation = prepare(args)
    levels = list(args.parallel)
    measured = distinct(targets(args))
    folders, summaries, backends = [], {}, {}
    with progress_bar() as progress:
        total = len(measured) * plan_ticks(services, args, levels) + extra_ticks
        task = progress.add_task("benchmark", total=total)

        def tick():
            progress.advance(task)

        def say(text: str, extra: int = 0):
            progress.update(task, description=text, total=progress.tasks[0].total + extra)

        context = (services, specs, sources, evaluation, levels, tick, say)
        for target in measured:
            folder, summaries[target.label] = bench_device(args, command, target, backends, *context)
            folders.append(folder)
        if after is not None:
            folders.append(after(summaries, backends, specs, sources, tick, say))
    return folders


def bench_device(
    args, command: str, target: MeasuredDevice, backends: dict, services, specs, sources, evaluation, levels, tick, say
):
    """One device: generation runs, evaluation, presets and the parallel sweep per service; its loaded
    backends are kept in `backends` for the pool study."""
    from audionet.benchmarks.devices import load
    from audionet.benchmarks.plots import write_plots
    from audionet.benchmarks.service_runs import run_service
    from audionet.benchmarks.sweep import sweep
    from audionet.benchmarks.tables import render
    from audionet.benchmarks.workload import MODES, make_workloads
    from audionet.lib.gpu import cuda_index
    from audionet.lib.timing import Timer
    from audionet.models.eval.profiles import chosen_profile

    info = target.info()
    timer = Timer("bench", device=info["slug"], window=100_000)
    presets = list(args.presets)
    results = {}
    load_before = os.getloadavg()
    where = f"{target.label}: "
    for name in services:
        service = registry.get(name)
        say(f"{where}{name}: loading {specs[name]}")
        backend = backends[(target.device, target.slowdown, name)] = load(
            service, specs[name], target, args.simulate_floor
        )
        workloads = make_workloads(service, backend, MODES[args.mode], args.seed, args.runs, sources[name])

        def run(backend_, service=service, workloads=workloads):
            return run_service(
                service,
                backend_,
                workloads,
                runs=args.runs,
                warmup=args.warmup,
                timer=timer,
                evaluation=evaluation,
                tick=tick,
                gpu_index=cuda_index(target.device),
            )

        say(f"{where}{name}: runs")
        result = run(backend)
        result.update(spec=specs[name], title=service.title, metrics=[list(m) for m in service.metrics])
        if presets:
            say(f"{where}{name}: presets", len(other_presets(backend, presets)) * per_service_ticks(args))
            result["presets"] = run_presets(service, specs[name], backend, presets, run)
        else:
            result["presets"] = (
                {"note": "this backend has no presets"}
                if not backend.presets
                else {"note": f"presets {', '.join(backend.presets)}: pass --presets to measure"}
            )
        if levels:
            rounds = sweep_rounds(result, args)
            say(f"{where}{name}: parallel sweep ({rounds} per worker)", sum(levels) * (rounds - args.sweep_rounds))
            result["sweep"] = sweep(
                service,
                backend,
                workloads[0].requests[0],
                levels,
                lambda p, per_worker=rounds: p * per_worker,
                tick,
            )
        results[name] = result
    summary = {
        "slug": target.label,
        "device": info,
        "simulated": None if target.slowdown is None else {"slowdown": target.slowdown, "floor": args.simulate_floor},
        "environment": environment(),
        "mode": args.mode,
        "runs": args.runs,
        "warmup": args.warmup,
        "weights": args.weights,
        "timing_only": args.weights == "random",
        "parallel_levels": levels,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command,
        "services": results,
        "load_average": {"start": list(load_before), "end": list(os.getloadavg())},
        "evaluation": evaluation.describe() if evaluation else None,
        "eval_profile": chosen_profile(args),
    }
    folder = os.path.join(args.out, target.label + (f"-{args.tag}" if args.tag else ""))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "gpu_info.json"), "w") as handle:
        json.dump({**info, **environment()}, handle, indent=2)
    with open(os.path.join(folder, "benchmark_summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    with open(os.path.join(folder, "tables.md"), "w") as handle:
        handle.write(render(summary))
    write_plots(summary, folder)
    return folder, summary


def main(argv=None, prog: str = "audionet-bench services") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(prog).parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        folders = benchmark(args, command_line(prog, argv))
    except (ConfigError, BackendError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return exit_code(error)
    for folder in folders:
        print(f"results in {folder}: {', '.join(sorted(os.listdir(folder)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
