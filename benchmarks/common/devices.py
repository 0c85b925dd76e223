"""The devices `audionet-bench device-tables` and `pool` measure, from the miner's own pool flags (--pool.devices,
--pool.parallel[.<service>]).

`--simulate.slowdown 1,3` (benchmark only) turns `--pool.devices cpu,cpu` into two simulated
devices on this CPU, the second three times slower (`benchmarks/common/simulated.py`): how the dispatcher
is measured on a machine without GPUs. Every result they produce says "simulated".
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from audionet.benchmarks.common import simulated
from audionet.lib.core.config import CommaList, flag
from audionet.lib.core.devices import describe_device, device_labels, resolve_devices, unique
from audionet.lib.core.errors import ConfigError


def factors(text: str) -> tuple[float, ...]:
    values = CommaList(convert=float, repeats=True, what="number")(text)
    if any(not v >= 1.0 for v in values):
        raise argparse.ArgumentTypeError("slowdowns are factors >= 1 (a simulated device is never faster)")
    return values


def add_device_flags(parser) -> None:
    group = parser.add_argument_group("simulated devices (no GPU needed)")
    flag(
        group,
        "simulate.slowdown",
        type=factors,
        default=None,
        help="benchmark only: one factor per device entry (--pool.devices, or --eval.devices for the "
        "evaluator-devices study; all cpu), e.g. 1,3: simulated devices that take N x the CPU's time, labelled simulated",
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
class MeasuredDevice:
    device: str  # cpu, cuda:0
    label: str  # result folder and row name
    slowdown: Optional[float] = None  # a simulated device

    def info(self) -> dict:
        info = describe_device(self.device).as_dict()
        if self.slowdown is not None:
            info.update(slug=self.label, name=f"{info['name']} (simulated device: {self.slowdown:g}x its time)")
        return info


def targets(args, devices_flag: str = "pool.devices") -> list[MeasuredDevice]:
    """The devices of `--<devices_flag>` (the pool's, or --eval.devices for the evaluator-devices study), each
    simulated with its --simulate.slowdown factor where given."""
    flag_name = f"--{devices_flag}"
    devices = resolve_devices(getattr(args, devices_flag.replace(".", "_")), flag=flag_name)
    slowdowns = args.simulate_slowdown
    if slowdowns is None:
        return [MeasuredDevice(device, label) for device, label in zip(devices, device_labels(devices))]
    if len(slowdowns) != len(devices) or set(devices) != {"cpu"}:
        raise ConfigError(f"--simulate.slowdown: give one factor per {flag_name} entry, and only cpu devices")
    if getattr(args, "presets", None):
        raise ConfigError("--simulate.slowdown measures the dispatcher; leave out --presets")
    labels = unique([simulated.label(f) for f in slowdowns])
    return [MeasuredDevice("cpu", label, f) for label, f in zip(labels, slowdowns)]


def distinct(chosen: list[MeasuredDevice]) -> list[MeasuredDevice]:
    """One target per device (and slowdown): a device listed twice is measured once on its own."""
    seen, out = set(), []
    for target in chosen:
        if (target.device, target.slowdown) not in seen:
            seen.add((target.device, target.slowdown))
            out.append(target)
    return out


def load(service, spec: str, target: MeasuredDevice, floor: float = 0.0):
    backend = service.load_backend(spec, device=target.device)
    return backend if target.slowdown is None else simulated.simulated(backend, target.slowdown, floor)
