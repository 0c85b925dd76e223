"""The pool flags (miner and audionet-bench define them here, once) and the replicas they ask for."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Optional

from audionet.lib.core.config import flag, positive_int
from audionet.lib.core.devices import describe_device, resolve_devices
from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.pool.replica import LocalReplica, Replica
from audionet.lib.services import registry
from audionet.models.base import Backend

BACKENDS = ("local", "ray")
POOL_LABEL = "pool"  # the miner-wide timing device when replicas run on several devices


def counts(text: str) -> tuple[int, ...]:
    """argparse type: "2,1" -> (2, 1); repeats are kept (one count per device)."""
    try:
        values = tuple(positive_int(part.strip()) for part in str(text).split(","))
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of positive counts") from None
    return values


def add_pool_flags(parser, *, backends: bool = True, parallel_default: Optional[str] = "1") -> None:
    """--pool.devices, --pool.parallel, --pool.parallel.<service> (and, for the miner, --pool.backend
    and --ray.*). audionet-bench has no default count: it recommends one per device."""
    group = parser.add_argument_group("device pool (one model replica per device and service)")
    flag(
        group,
        "pool.devices",
        default="auto",
        help="comma list of devices, one replica of each service per device: auto (every visible GPU, "
        "else cpu) | cpu | cuda | cuda:N, e.g. cuda:0,cuda:1",
    )
    flag(
        group,
        "pool.parallel",
        type=counts,
        default=parallel_default,
        help="requests at once per device: one count for every device, or one per device (e.g. 2,1)"
        + ("" if parallel_default else "; default: the count each device's sweep recommends"),
    )
    for service in registry.all_services():
        flag(
            group,
            f"pool.parallel.{service.name}",
            type=counts,
            default=None,
            help=f"{service.title}: per-device counts where they differ from --pool.parallel",
        )
    if not backends:
        return
    flag(
        group,
        "pool.backend",
        default="local",
        choices=BACKENDS,
        help="local: replicas in this process; ray: replicas are Ray actors (pip install 'audionet[ray]')",
    )
    flag(
        group,
        "ray.address",
        default="auto",
        help="with --pool.backend ray: auto (the cluster started on this host by `ray start --head`), "
        "host:port or ray://host:port",
    )
    flag(
        group,
        "ray.gpus",
        type=float,
        default=None,
        help="GPUs per GPU replica actor, fractions allowed (default 1/number of services: "
        "one replica of each service per GPU)",
    )


def parallel_counts(args, name: str, devices: int) -> list[int]:
    """The per-device counts for service `name`: its own flag where given, else --pool.parallel."""
    own = getattr(args, f"pool_parallel_{name}", None)
    values = list(own or args.pool_parallel)
    if len(values) == 1:
        return values * devices
    if len(values) != devices:
        which = f"--pool.parallel.{name}" if own else "--pool.parallel"
        raise ConfigError(
            f"{which} gives {len(values)} counts for {devices} devices; give one count, or one per device"
        )
    return values


def device_labels(devices: Sequence[str]) -> list[str]:
    """A label per replica device, unique in the pool: the device's slug (the GPU name); with the
    device index where two devices share a model; -r1, -r2 for a device listed twice."""
    slugs = [describe_device(device).slug for device in devices]
    owners = {slug: {d for d, s in zip(devices, slugs) if s == slug} for slug in slugs}
    return unique(
        [
            slug if len(owners[slug]) == 1 else f"{slug}-{device.replace(':', '')}"
            for device, slug in zip(devices, slugs)
        ]
    )


def unique(labels: Sequence[str]) -> list[str]:
    """Labels made unique: a label that occurs more than once becomes <label>-r1, <label>-r2, ..."""
    repeats, seen = Counter(labels), Counter()
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if repeats[label] == 1 else f"{label}-r{seen[label]}")
    return out


def local_replicas(service, backends: Sequence[Backend], parallel: Sequence[int]) -> list[Replica]:
    """One LocalReplica per loaded backend, labelled by the device it actually runs on (a backend may
    fall back, e.g. Kokoro to the CPU when onnxruntime has no CUDA provider)."""
    labels = device_labels([backend.device for backend in backends])
    return [
        LocalReplica(service, backend, count, label, describe_device(backend.device).slug)
        for backend, count, label in zip(backends, parallel, labels)
    ]


def from_backends(backends: Mapping[str, Backend]) -> dict[str, list[Replica]]:
    """{service: backend} -> one single-slot replica each (tests and tools that load one backend)."""
    return {name: local_replicas(registry.get(name), [backend], [1]) for name, backend in backends.items()}


def build_replicas(args, names: Sequence[str]) -> dict[str, list[Replica]]:
    """Every replica the flags ask for: for each service, one per device (--pool.devices), each with
    its parallel count, loaded with --<service>.model, --<service>.preset and --dtype."""
    specs = registry.backend_specs(args, names)
    if getattr(args, "pool_backend", "local") == "ray":
        from audionet.lib.miner.pool.ray_actors import ray_replicas

        return ray_replicas(args, specs)
    devices = resolve_devices(args.pool_devices, flag="--pool.devices")
    replicas = {}
    for name, spec in specs.items():
        service = registry.get(name)
        parallel = parallel_counts(args, name, len(devices))
        preset = getattr(args, f"{name}_preset", None)
        backends = [
            service.load_backend(spec, device=d, dtype=getattr(args, "dtype", "auto"), preset=preset) for d in devices
        ]
        replicas[name] = local_replicas(service, backends, parallel)
    return replicas


def pool_label(replicas: Mapping[str, Sequence[Replica]]) -> str:
    """The timer's own device: the one device label when every replica shares it, else "pool"."""
    labels = {replica.name for group in replicas.values() for replica in group}
    return labels.pop() if len(labels) == 1 else POOL_LABEL
