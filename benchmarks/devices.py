"""The devices audionet-bench measures, from the miner's own pool flags (--pool.devices,
--pool.parallel[.<service>]), and the pool study across them when there are two or more.

`--simulate.slowdown 1,3` (benchmark only) turns `--pool.devices cpu,cpu` into two simulated
devices on this CPU, the second three times slower (`benchmarks/simulated.py`): how the dispatcher
is measured on a machine without GPUs. Every result they produce says "simulated".
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from audionet.benchmarks import pool_report, simulated
from audionet.benchmarks.pool_study import ROUND_ROBIN, WEIGHTED, study
from audionet.lib import services as registry
from audionet.lib.config import flag, positive_int
from audionet.lib.errors import ConfigError
from audionet.lib.gpu import describe_device, resolve_devices
from audionet.lib.pool import LocalReplica, device_labels, parallel_counts
from audionet.lib.pool.build import counts, unique


def factors(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in str(text).split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of numbers") from None
    if any(not v >= 1.0 for v in values):
        raise argparse.ArgumentTypeError("slowdowns are factors >= 1 (a simulated device is never faster)")
    return values


def add_study_flags(parser) -> None:
    group = parser.add_argument_group("device pool study (two or more --pool.devices)")
    group.add_argument("--batches", type=counts, default="1,2,4,8,16", help="burst sizes: requests sent at once")
    group.add_argument("--batch-rounds", type=positive_int, default=3, help="bursts per size and configuration")
    flag(
        group,
        "simulate.slowdown",
        type=factors,
        default=None,
        help="benchmark only: one factor per --pool.devices entry (all cpu), e.g. 1,3: simulated devices "
        "that take N x the CPU's time, labelled simulated",
    )
    flag(
        group,
        "simulate.floor",
        type=float,
        default=0.0,
        help="simulated devices: at least this many seconds per audio second before the slowdown "
        "(makes the simulated speed independent of the CPU's load)",
    )


@dataclass(frozen=True)
class Target:
    device: str  # cpu, cuda:0
    label: str  # result folder and row name
    slowdown: Optional[float] = None  # a simulated device

    def info(self) -> dict:
        info = describe_device(self.device).as_dict()
        if self.slowdown is not None:
            info.update(slug=self.label, name=f"{info['name']} (simulated device: {self.slowdown:g}x its time)")
        return info


def targets(args) -> list[Target]:
    devices = resolve_devices(args.pool_devices, flag="--pool.devices")
    slowdowns = args.simulate_slowdown
    if slowdowns is None:
        return [Target(device, label) for device, label in zip(devices, device_labels(devices))]
    if len(slowdowns) != len(devices) or set(devices) != {"cpu"}:
        raise ConfigError("--simulate.slowdown: give one factor per --pool.devices entry, and only cpu devices")
    if args.presets:
        raise ConfigError("--simulate.slowdown measures the dispatcher; leave out --presets")
    labels = unique([simulated.label(f) for f in slowdowns])
    return [Target("cpu", label, f) for label, f in zip(labels, slowdowns)]


def distinct(chosen: list[Target]) -> list[Target]:
    """One target per device (and slowdown): a device listed twice is measured once on its own."""
    seen, out = set(), []
    for target in chosen:
        if (target.device, target.slowdown) not in seen:
            seen.add((target.device, target.slowdown))
            out.append(target)
    return out


def load(service, spec: str, target: Target, floor: float = 0.0):
    backend = service.load_backend(spec, device=target.device)
    return backend if target.slowdown is None else simulated.simulated(backend, target.slowdown, floor)


def pool_ticks(args, services: list[str], chosen: list[Target]) -> int:
    configurations = len(chosen) + 2  # each alone, round-robin, weighted
    return len(services) * configurations * len(args.batches) * args.batch_rounds


def pool_folder(chosen: list[Target]) -> str:
    if all(t.slowdown is not None for t in chosen):
        cpu = chosen[0].label.split("-simulated-")[0]
        return f"pool-{cpu}-simulated-" + "+".join(f"{t.slowdown:g}x" for t in chosen)
    return "pool-" + "+".join(t.label for t in chosen)


def run_study(
    args,
    argv: list[str],
    chosen: list[Target],
    summaries: dict[str, dict],
    backends: dict,
    specs: dict[str, str],
    sources: dict,
    tick: Callable[[], None],
    say: Callable[[str], None],
) -> str:
    """Replicas on every listed device (reusing the backends measured alone), the study per service,
    and the report in <out>/pool-.../."""
    started_load = os.getloadavg()[0]
    studies, counts = {}, {}
    for name in args.services:
        service = registry.get(name)
        sweeps = [
            ((summaries[t.label]["services"][name].get("sweep") or {}) if t.label in summaries else {}) for t in chosen
        ]
        recommended = [s.get("recommended_parallel") or 1 for s in sweeps]
        explicit = args.pool_parallel is not None or getattr(args, f"pool_parallel_{name}", None)
        counts[name] = parallel_counts(args, name, len(chosen)) if explicit else recommended
        replicas = []
        for target, count in zip(chosen, counts[name]):
            backend = backends.pop((target.device, target.slowdown, name), None) or load(
                service, specs[name], target, args.simulate_floor
            )
            wire = target.label if target.slowdown is not None else describe_device(target.device).slug
            replicas.append(LocalReplica(service, backend, count, target.label, wire))
        say(f"{name}: pool study")

        def make_requests(n: int, round_: int, service=service, name=name) -> list:
            del round_  # every round the same requests: the spread between rounds is the timing's own
            rng = np.random.default_rng((args.seed, n))
            return [service.draw(rng, sources[name]) for _ in range(n)]

        studies[name] = study(service, replicas, make_requests, list(args.batches), args.batch_rounds, tick)
        for replica in replicas:
            replica.close()
    simulated_ = all(t.slowdown is not None for t in chosen)
    summary = {
        "labels": [t.label for t in chosen],
        "devices": [t.info() for t in chosen],
        "simulated": simulated_,
        "note": simulated.NOTE if simulated_ else None,
        "titles": {name: registry.get(name).title for name in args.services},
        "rounds": args.batch_rounds,
        "per_device": [
            {"label": label, "sweeps": {n: r["sweep"] for n, r in summary["services"].items() if r.get("sweep")}}
            for label, summary in summaries.items()
        ],
        "studies": studies,
        "parallel": counts,
        "recommended_flags": recommended_flags(chosen, counts),
        "dispatch_policies": [WEIGHTED, ROUND_ROBIN],
        "load_average": [started_load, os.getloadavg()[0]],
        "cpu_cores": os.cpu_count(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join(["audionet-bench", *argv]),
    }
    folder = os.path.join(args.out, pool_folder(chosen))
    pool_report.write(summary, folder)
    return folder


def recommended_flags(chosen: list[Target], counts: dict[str, list[int]]) -> str:
    """--pool.devices and --pool.parallel (per service where services differ) for the miner."""
    common = max((tuple(c) for c in counts.values()), key=list(map(tuple, counts.values())).count)
    flags = [f"--pool.devices {','.join(t.device for t in chosen)}", f"--pool.parallel {','.join(map(str, common))}"]
    flags += [f"--pool.parallel.{name} {','.join(map(str, c))}" for name, c in counts.items() if tuple(c) != common]
    return " ".join(flags)
