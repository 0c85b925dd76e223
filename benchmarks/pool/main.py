"""Pool study (heterogeneous devices, as in docs/methodology.md#parallel-requests-per-gpu): every device of --pool.devices measured on its own (as
`audionet-bench device-tables` does, whose parallel sweep picks each device's parallel count), then bursts of N
requests sent at once through the miner's own scheduler (`audionet.lib.miner.pool`: its stake-ordered line and
device dispatch) for every single device alone, all devices with round-robin dispatch (the parallel-requests study's
client), and all devices with the miner's speed-weighted dispatch. Measured side by side in one run: the
same requests, each configuration after a fresh warm-up calibration.

    audionet-bench pool --services tts --pool.devices cpu,cpu --simulate.slowdown 1,3 --batches 1,2,4,8,16
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from audionet.benchmarks.common import devices
from audionet.benchmarks.common.flags import one_line_errors
from audionet.benchmarks.common.results import command_line
from audionet.benchmarks.common.timing import summarise
from audionet.benchmarks.device_tables import main as services
from audionet.benchmarks.pool import report as pool_report
from audionet.lib.core.config import positive_int
from audionet.lib.core.devices import describe_device
from audionet.lib.core.dispatch import ROUND_ROBIN, WEIGHTED, Speed
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.timing import Timer
from audionet.lib.miner.pool import LocalReplica, Pool, PoolSettings, Replica
from audionet.lib.miner.pool.settings import counts as count_list
from audionet.lib.services import registry

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
    alone = [(f"{r.name} alone", [r], WEIGHTED) for r in replicas]
    everyone = " + ".join(r.name for r in replicas)
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
            makespans = [run["makespan_s"] for run in runs]
            rows.append(
                {
                    "configuration": label,
                    "devices": [r.name for r in members],
                    "parallel": [r.parallel for r in members],
                    "policy": policy,
                    "batch": n,
                    "makespan": summarise(makespans, drop_outliers=False).as_dict(),
                    "makespans_s": makespans,
                    "latencies_s": latencies,  # each request's, round after round (seed 001's "Times")
                    "latency_mean_s": float(np.mean(latencies)),
                    "latency_p95_s": float(np.percentile(latencies, 95)),
                    "served": {r.name: served.get(r.name, 0) for r in members},
                    "audio_s_per_s": sum(run["audio_s"] for run in runs) / sum(makespans),
                }
            )
    return {
        "service": service.name,
        "title": service.title,
        "model": replicas[0].model_id,
        "devices": [{"label": r.name, "device": r.device, "parallel": r.parallel} for r in replicas],
        "batches": list(batches),
        "rounds": rounds,
        "rows": rows,
        "findings": findings(rows, [r.name for r in replicas]),
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
        times = {"weighted_s": weighted, "round_robin_s": robin, "best_alone": best, "best_alone_s": alone[best]}
        ratios = {"weighted_vs_round_robin": weighted / robin, "weighted_vs_best_alone": weighted / alone[best]}
        others = sum(n for label, n in served.items() if label != best)
        out.append({"batch": batch, "others_served": others, **times, **ratios})
    return out


def pool_label(chosen) -> str:
    if all(t.slowdown is not None for t in chosen):
        cpu = chosen[0].label.split("-simulated-")[0]
        return f"pool-{cpu}-simulated-" + "+".join(f"{t.slowdown:g}x" for t in chosen)
    return "pool-" + "+".join(t.label for t in chosen)


def replicas_for(bench, chosen, summaries: dict[str, dict], name: str) -> list[LocalReplica]:
    """A replica of `name` on every listed device, reusing the backends measured alone; each with the parallel
    count its device's sweep recommends, or --pool.parallel[.<service>]."""
    args, service = bench.args, registry.get(name)
    sweeps = [summaries[t.label]["services"][name].get("sweep") or {} if t.label in summaries else {} for t in chosen]
    counts = [s.get("recommended_parallel") or 1 for s in sweeps]
    if args.pool_parallel is not None or getattr(args, f"pool_parallel_{name}", None):
        counts = PoolSettings.from_flags(args).parallel_counts(name, len(chosen))
    replicas = []
    for target, count in zip(chosen, counts):
        backend = bench.backends.pop((target.device, target.slowdown, name), None) or devices.load(
            service, bench.specs[name], target, args.simulate_floor
        )
        wire = target.label if target.slowdown is not None else describe_device(target.device).slug
        replicas.append(LocalReplica(service, backend, count, target.label, wire))
    return replicas


def run_study(chosen, bench, summaries: dict[str, dict]) -> str:
    """The study per service over replicas on every listed device, and the report in <out>/pool-.../."""
    args, started_load = bench.args, os.getloadavg()[0]
    studies, counts = {}, {}
    for name in args.services:
        service, replicas = registry.get(name), replicas_for(bench, chosen, summaries, name)
        counts[name] = [r.parallel for r in replicas]
        bench.say(f"{name}: pool study")

        def make_requests(n: int, round_: int, service=service, name=name) -> list:
            del round_  # every round the same requests: the spread between rounds is the timing's own
            rng = np.random.default_rng((args.seed, n))
            return [service.draw(rng, bench.sources[name]) for _ in range(n)]

        studies[name] = study(service, replicas, make_requests, list(args.batches), args.batch_rounds, bench.tick)
        for replica in replicas:
            replica.close()
    simulated_ = all(t.slowdown is not None for t in chosen)
    sweeps = {
        label: {n: r["sweep"] for n, r in s["services"].items() if r.get("sweep")} for label, s in summaries.items()
    }
    summary = {
        "labels": [t.label for t in chosen],
        "devices": [t.info() for t in chosen],
        "simulated": simulated_,
        "note": devices.simulated.NOTE if simulated_ else None,
        "titles": {name: registry.get(name).title for name in args.services},
        "rounds": args.batch_rounds,
        "per_device": [{"label": label, "sweeps": sweeps[label]} for label in summaries],
        "studies": studies,
        "parallel": counts,
        "recommended_flags": recommended_flags(chosen, counts),
        "dispatch_policies": [WEIGHTED, ROUND_ROBIN],
        "load_average": [started_load, os.getloadavg()[0]],
        "cpu_cores": os.cpu_count(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    return pool_report.write(summary, args.out, pool_label(chosen), bench.command)


def recommended_flags(chosen, counts: dict[str, list[int]]) -> str:
    """--pool.devices and --pool.parallel (per service where services differ) for the miner."""
    common = max((tuple(c) for c in counts.values()), key=list(map(tuple, counts.values())).count)
    flags = [f"--pool.devices {','.join(t.device for t in chosen)}", f"--pool.parallel {','.join(map(str, common))}"]
    flags += [f"--pool.parallel.{name} {','.join(map(str, c))}" for name, c in counts.items() if tuple(c) != common]
    return " ".join(flags)


def main(argv: list[str], prog: str = "audionet-bench pool") -> int:
    parser = services.build_parser(prog)
    parser.description = __doc__.split("\n")[0]
    group = parser.add_argument_group("the pool study")
    group.add_argument("--batches", type=count_list, default="1,2,4,8,16", help="burst sizes: requests sent at once")
    group.add_argument("--batch-rounds", type=positive_int, default=3, help="bursts per size and configuration")
    args = parser.parse_args(argv)

    def run() -> int:
        chosen = devices.targets(args)
        if len(chosen) < 2:
            raise ConfigError("the pool study needs two or more --pool.devices (or simulated ones)")
        # each device alone, all with round-robin, all weighted
        ticks = len(args.services) * (len(chosen) + 2) * len(args.batches) * args.batch_rounds
        for folder in services.benchmark(args, command_line(prog, argv), ticks, partial(run_study, chosen)):
            print(f"results in {folder}")
        return 0

    return one_line_errors(prog, run)
