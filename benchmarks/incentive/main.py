"""Incentive study: which answers-to-weights curve pays for quality on a subnet that looks like one.

Takes the per-round raw scores of the adversary study (the honest offline backends, the cheap engines and
every attack of the catalogue, judged by the validator's Judge), builds a 256-uid subnet from them with the
strategic miners of issue 42 (`population.py`), runs it in wall-clock time with GPU and CPU validators at the
validator's defaults (`roles.py`) and Yuma consensus per mechanism as subtensor computes it (`sim.py`,
`lib/core/yuma.py`), checks the properties issues 33 and 42 ask for (`checks.py`, `events.py`, `serving.py`),
sweeps candidate records and publishing rules and picks the one the validator should run.

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
from audionet.benchmarks.incentive import events as after
from audionet.benchmarks.incentive import serving
from audionet.benchmarks.incentive.before import Issue33
from audionet.benchmarks.incentive.checks import STEADY_H, check_all, curve_points, steady
from audionet.benchmarks.incentive.population import Samples, population, samples_from_report
from audionet.benchmarks.incentive.roles import VALIDATORS
from audionet.benchmarks.incentive.scorers import PerService
from audionet.benchmarks.incentive.sim import Run, simulate
from audionet.lib.core.config import flag
from audionet.lib.validator.incentive import CURVE, HOUR

SAMPLES = os.path.join(RESULTS_DIR, "cpu-x86_64-2core", "adversaries-offline.json")
AFTER_H = 96.0  # simulated after the miners' events: a bait and switch's four days
TRACKED = ("bait", "upgrade", "quiet upgrade", "new hotkey", "reformed", "turned")  # pay after the events, plotted


def warm_up_h(scorer, hours: float | None = None) -> float:
    """Hours before the steady window (`hours`, or twice the record's memory)."""
    if hours is not None:
        return hours
    return 2 * (scorer.curve.memory.record_s if isinstance(scorer, PerService) else scorer.record_s) / HOUR


def timeline(scorer, warm_up: float | None = None) -> tuple[float, float]:
    """(the hour of the miners' events, the hour from which every round is simulated)."""
    before = warm_up_h(scorer, warm_up)
    return before + STEADY_H, max(0.0, before - 2.0)


def simulated(scorer, samples: Samples, seed: int, warm_up: float | None = None) -> Run:
    """The population through `scorer`: the warm-up, the steady window, the events and AFTER_H after them."""
    events, fine = timeline(scorer, warm_up)
    groups = population(samples, newcomer_h=events)
    return simulate(groups, samples.services, scorer, events + AFTER_H, events, seed, fine_from_h=fine)


def evaluate(scorer, samples: Samples, seed: int, copies: bool = True, warm_up: float | None = None) -> dict:
    """Run the population through `scorer`; with `copies`, also a population with one copy of the copied model
    (N copies vs one, to the end of the steady window) and the serving-count scenario."""
    events, fine = timeline(scorer, warm_up)
    run = simulated(scorer, samples, seed, warm_up)
    alone = counted = None
    if copies:
        one = population(samples, copies=1, newcomer_h=events)
        alone = simulate(one, samples.services, scorer, events, events, seed + 1, fine_from_h=fine)
        counted = serving.measure(scorer, samples, seed)
    tracked = {kind: after.relative_pay(run, kind)[run.event_epoch - 2 :].round(4).tolist() for kind in TRACKED}
    return {"scorer": scorer, "checks": check_all(run, alone, counted), "curve": curve_points(run), "after": tracked}


def candidates(services: tuple[str, ...], quick: bool = False) -> list[PerService]:
    """The sweep around the library's CURVE, on the layout of a 256-uid subnet (one mechanism): how long the
    record remembers, how sure the change statistic must be (threshold and allowance, in standard errors), and
    how sure a validator must be of its own evidence before it publishes."""
    if quick:
        return [PerService(CURVE, services)]
    out = []
    thresholds = ((8.0, 14.0), (10.0, 14.0), (12.0, 12.0))  # (drop, rise) in standard errors, allowance 0.35
    for record_h, (drop, rise), ready in itertools.product((96.0, 144.0), thresholds, (0.03, 0.04)):
        memory = {"record_s": record_h * HOUR, "drop_h": drop, "rise_h": rise}
        curve = replace(CURVE, ready_error=ready).with_memory(**memory)
        out.append(PerService(curve, services))
    return out


def passes(result: dict) -> bool:
    return all(check.ok for check in result["checks"].values())


def preference(result: dict) -> tuple:
    """Most properties kept; then the shortest record (the subnet forgets soonest), the change statistics that
    decide soonest (a drop first), and the validator that publishes soonest."""
    curve = result["scorer"].curve
    kept = sum(check.ok for check in result["checks"].values())
    return (-kept, curve.memory.record_s, curve.memory.drop_h, curve.memory.rise_h, -curve.ready_error)


def process_pool(jobs: int):
    """A pool of processes for `jobs` independent runs: one per core, no more than there are runs."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=max(1, min(jobs, os.cpu_count() or 1)))


def study(
    samples: Samples, seed: int, quick: bool = False, warm_up: float | None = None, progress=None, seeds: int = 1
) -> dict:
    """Every candidate without the copies run (in parallel processes), the preferred one with it and the
    serving-count scenario, the curve before issue 42, and the preferred curve with a mechanism per service;
    with `seeds` above 1, the preferred curve (both layouts) again on each further seed."""
    from concurrent.futures import as_completed

    services = tuple(samples.services)
    sweep = candidates(services, quick)
    with process_pool(len(sweep)) as pool:
        futures = [pool.submit(evaluate, c, samples, seed, False, warm_up) for c in sweep]
        for _ in as_completed(futures):
            if progress:
                progress()
        swept = [f.result() for f in futures]
        best = min(swept, key=preference)["scorer"]
        last = {
            "chosen": pool.submit(evaluate, best, samples, seed, True, warm_up),
            "before": pool.submit(evaluate, Issue33(services), samples, seed, True, warm_up),
            "per service": pool.submit(evaluate, replace(best, one_mechanism=False), samples, seed, False, warm_up),
        }
        again = {
            (other, layout): pool.submit(evaluate, scorer, samples, other, layout == "chosen", warm_up)
            for other in range(seed + 1, seed + seeds)
            for layout, scorer in (("chosen", best), ("per service", replace(best, one_mechanism=False)))
        }
        found = {name: future.result() for name, future in last.items()}
        if progress:
            progress()
        others: dict[int, dict] = {}
        for (other, layout), future in again.items():
            others.setdefault(other, {})[layout] = future.result()
            if progress:
                progress()
    return {"swept": swept, **found, "seeds": others}


def self_dealing_rows(samples: Samples, seed: int, warm_up: float | None = None) -> tuple[list[dict], list[dict]]:
    """The validator's CURVE run on `seed`, replayed with a self-dealing validator (`selfdealing.py`): (its rows
    per owned miner and fraction, its rows bonding a newly registered miner early)."""
    from audionet.benchmarks.incentive import selfdealing

    run = simulated(PerService(CURVE, tuple(samples.services)), samples, seed, warm_up)
    validator = [r.name for r in run.roles].index(selfdealing.SELF_DEALER)
    rows = [
        {"seed": seed, "favoured": name, **row}
        for name in selfdealing.FAVOURED
        for row in selfdealing.measure(run, steady(run), validator, selfdealing.favoured_uid(run, name))
    ]
    newcomer = selfdealing.favoured_uid(run, selfdealing.EARLY)
    return rows, [{"seed": seed, **row} for row in selfdealing.measure_early(run, validator, newcomer)]


def self_dealing(samples: Samples, args, slug: str, command: str) -> int:
    """`--self-dealing`: the seeds in parallel processes, then `selfdealing.write`."""
    from rich.progress import track

    from audionet.benchmarks.incentive import selfdealing

    seeds = list(range(args.seed, args.seed + args.self_dealing))
    with process_pool(len(seeds)) as pool:
        futures = [pool.submit(self_dealing_rows, samples, seed, args.warmup_hours) for seed in seeds]
        found = [future.result() for future in track(futures, description="seeds replayed")]
    rows = [row for seed_rows, _ in found for row in seed_rows]
    stake = next(r.stake for r in VALIDATORS if r.name == selfdealing.SELF_DEALER)
    data = {"samples": args.samples, "seeds": seeds, "self_dealer": selfdealing.SELF_DEALER, "stake": stake}
    data.update({"favoured": list(selfdealing.FAVOURED), "fractions": list(selfdealing.FRACTIONS), "rows": rows})
    data["early"] = [row for _, early in found for row in early]
    print(selfdealing.write(data, args.out, slug, f"incentive-self-dealing-{samples.profile}", command))
    return 0


def build_parser(prog: str):
    parser = study_parser(prog, __doc__, where="beside the samples, <out>/<samples' device-slug>/")
    parser.add_argument("--samples", default=SAMPLES, help="adversary study JSON with per-round raw scores")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="only the library's CURVE and the curve before it")
    parser.add_argument(
        "--self-dealing",
        type=int,
        default=0,
        metavar="SEEDS",
        help="instead of the sweep: the library's CURVE on SEEDS seeds from --seed, replayed with a validator that "
        "moves weight onto a miner it owns, under each bond model",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="also run the chosen curve (both layouts) on the seeds after --seed, up to this many seeds in all",
    )
    flag(  # spelled as the other studies' --warmup and --warmup-seconds; --warm-up kept for a release
        parser,
        "warmup-hours",
        old=("warm-up",),
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
    slug = os.path.basename(os.path.dirname(os.path.abspath(args.samples)))
    if args.self_dealing:
        return self_dealing(samples, args, slug, command_line(prog, argv))
    with Progress() as progress:
        total = len(candidates(tuple(samples.services), args.quick)) + 1 + 2 * (max(1, args.seeds) - 1)
        task = progress.add_task("candidate curves and seeds", total=total)
        advance = lambda: progress.advance(task)  # noqa: E731
        found = study(samples, args.seed, args.quick, args.warmup_hours, advance, max(1, args.seeds))
    print(write(found, samples, args, slug, f"incentive-{samples.profile}", command_line(prog, argv)))
    return 0 if passes(found["chosen"]) else 1
