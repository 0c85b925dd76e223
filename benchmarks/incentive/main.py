"""Incentive study: which answers-to-weights curve pays for quality on a subnet that looks like one.

Takes the per-round raw scores of the adversary study (the honest offline backends, the cheap engines and
every attack of the catalogue, judged by the validator's Judge), builds a 256-uid subnet from them
(`population.py`), runs it in wall-clock time with 13 validators at the validator's defaults and Yuma
consensus per mechanism as subtensor computes it (`sim.py`, `lib/core/yuma.py`), checks the properties issue 33
asks for (`checks.py`), sweeps candidate curves and picks the one the validator should run.

    audionet-bench incentive [--samples benchmarks/results/cpu-x86_64-2core/adversaries-offline.json]

New judges give new samples: run the adversary study with them, then this command on its JSON.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from dataclasses import replace

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import RESULTS_DIR, command_line
from audionet.benchmarks.incentive.checks import STEADY_H, check_all, curve_points
from audionet.benchmarks.incentive.population import Samples, population, samples_from_report
from audionet.benchmarks.incentive.scorers import Gated, PerService
from audionet.benchmarks.incentive.sim import VALIDATOR_EVENTS_H, simulate
from audionet.lib.validator.incentive import CURVE, HOUR, Curve

SAMPLES = os.path.join(RESULTS_DIR, "cpu-x86_64-2core", "adversaries-offline.json")
AFTER_H = VALIDATOR_EVENTS_H + 3.0  # simulated after the miners' events


def warm_up_h(scorer, hours: float | None = None) -> float:
    """Hours before the steady window (`hours`, or twice the record's memory; the legacy EMA's is 1/alpha
    answers at about 19 answers an hour)."""
    if hours is not None:
        return hours
    if isinstance(scorer, PerService):
        return 2 * scorer.curve.memory.record_s / HOUR
    return 2 / scorer.alpha / 19


def evaluate(scorer, samples: Samples, seed: int, copies: bool = True, warm_up: float | None = None) -> dict:
    """Run the population through `scorer`; with `copies`, also a population with one copy of the copied model
    (N copies vs one)."""
    before = warm_up_h(scorer, warm_up)
    events, fine = before + STEADY_H, max(0.0, before - 2.0)
    run = simulate(
        population(samples, newcomer_h=events),
        samples.services,
        scorer,
        events + AFTER_H,
        events,
        seed,
        fine_from_h=fine,
    )
    alone = None
    if copies:
        one = population(samples, copies=1, newcomer_h=events)
        alone = simulate(one, samples.services, scorer, events + AFTER_H, events, seed + 1, fine_from_h=fine)
    return {"scorer": scorer, "checks": check_all(run, alone), "curve": curve_points(run)}


def candidates(services: tuple[str, ...], quick: bool = False) -> list[PerService]:
    """The sweep around the library's CURVE: floors, record memories, how young uids count and how far recent
    answers must stray before they move the estimate; a power of 2 at each floor for comparison."""
    if quick:
        return [PerService(CURVE, services)]
    out = []
    for floor, record_h, z, change_z in itertools.product((0.78, 0.8, 0.82), (24.0, 48.0), (0.5, 1.0), (2.0, 3.0)):
        curve = replace(CURVE, floor=floor, confidence_z=z).with_memory(record_s=record_h * HOUR, change_z=change_z)
        out.append(PerService(curve, services))
    out += [PerService(replace(CURVE, floor=floor, power=2.0), services) for floor in (0.78, 0.8, 0.82)]
    return out


def passes(result: dict) -> bool:
    return all(check.ok for check in result["checks"].values())


def preference(result: dict) -> tuple:
    """Most properties kept; then the shortest record (the subnet sees a change soonest), the lowest floor (it
    pays most of the honest spread), the calmest shape, the least caution about young uids, and recent answers
    that must stray furthest before they move the estimate."""
    curve: Curve = result["scorer"].curve
    kept = sum(check.ok for check in result["checks"].values())
    return (-kept, curve.memory.record_s, curve.floor, curve.power, curve.confidence_z, -curve.memory.change_z)


def study(samples: Samples, seed: int, quick: bool = False, warm_up: float | None = None, progress=None) -> dict:
    """Every candidate without the copies run (in parallel processes), the preferred one with it, the curve
    before issue 33, and the preferred curve with every service on one mechanism."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    services = tuple(samples.services)
    sweep = candidates(services, quick)
    with ProcessPoolExecutor(max_workers=max(1, min(len(sweep), os.cpu_count() or 1))) as pool:
        futures = [pool.submit(evaluate, c, samples, seed, False, warm_up) for c in sweep]
        for _ in as_completed(futures):
            if progress:
                progress()
        swept = [f.result() for f in futures]
        best = min(swept, key=preference)["scorer"]
        last = {
            "chosen": pool.submit(evaluate, best, samples, seed, True, warm_up),
            "before": pool.submit(evaluate, Gated(), samples, seed, True, warm_up),
            "one mechanism": pool.submit(evaluate, replace(best, one_mechanism=True), samples, seed, False, warm_up),
        }
        found = {name: future.result() for name, future in last.items()}
        if progress:
            progress()
    return {"swept": swept, **found}


def build_parser(prog: str):
    parser = study_parser(prog, __doc__, where="beside the samples, <out>/<samples' device-slug>/")
    parser.add_argument("--samples", default=SAMPLES, help="adversary study JSON with per-round raw scores")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="only the library's CURVE and the curve before it")
    parser.add_argument(
        "--warm-up",
        type=float,
        default=None,
        help="hours simulated before the steady window (default: twice the memory)",
    )
    return parser


def main(argv: list[str], prog: str = "audionet-bench incentive") -> int:
    from rich.progress import Progress

    from audionet.benchmarks.incentive.report import write

    args = build_parser(prog).parse_args(argv)
    try:
        with open(args.samples) as handle:
            samples = samples_from_report(json.load(handle))
    except (OSError, ValueError, KeyError) as error:
        print(f"{prog}: cannot read samples {args.samples}: {error}", file=sys.stderr)
        return 2
    with Progress() as progress:
        task = progress.add_task("candidate curves", total=len(candidates(tuple(samples.services), args.quick)) + 1)
        found = study(samples, args.seed, args.quick, args.warm_up, lambda: progress.advance(task))
    slug = os.path.basename(os.path.dirname(os.path.abspath(args.samples)))
    print(write(found, samples, args, slug, f"incentive-{samples.profile}", command_line(prog, argv)))
    return 0 if passes(found["chosen"]) else 1
