"""The pool flags (miner and audionet-bench define them here, once), the typed settings entry points read
them into (`PoolSettings.from_flags`), and the replicas the settings ask for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.config import CommaList, flag, positive_int
from audionet.lib.core.devices import describe_device, device_labels, resolve_devices
from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.pool.replica import LocalReplica, Replica
from audionet.lib.services import registry
from audionet.models.base import Backend

BACKENDS = ("local", "ray")
POOL_LABEL = "pool"  # the miner-wide timing device when replicas run on several devices


# argparse type: "2,1" -> (2, 1); repeats are kept (one count per device).
counts = CommaList(convert=positive_int, repeats=True, what="positive count")


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


@dataclass(frozen=True)
class PoolSettings:
    """--pool.*, --ray.* and --dtype as typed settings."""

    devices: str = "auto"  # comma list: auto | cpu | cuda | cuda:N
    parallel: Optional[tuple[int, ...]] = (1,)  # per device, or one for all (None: a benchmark recommends)
    parallel_by_service: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    backend: str = "local"
    ray_address: str = "auto"
    ray_gpus: Optional[float] = None
    dtype: str = "auto"

    @classmethod
    def from_flags(cls, args) -> PoolSettings:
        own = {s.name: getattr(args, f"pool_parallel_{s.name}", None) for s in registry.all_services()}
        return cls(
            devices=args.pool_devices,
            parallel=args.pool_parallel,
            parallel_by_service={name: counts for name, counts in own.items() if counts},
            backend=getattr(args, "pool_backend", "local"),
            ray_address=getattr(args, "ray_address", "auto"),
            ray_gpus=getattr(args, "ray_gpus", None),
            dtype=getattr(args, "dtype", "auto"),
        )

    def parallel_counts(self, name: str, devices: int) -> list[int]:
        """The per-device counts for service `name`: its own counts where given, else the pool's."""
        own = self.parallel_by_service.get(name)
        values = list(own or self.parallel or (1,))
        if len(values) == 1:
            return values * devices
        if len(values) != devices:
            which = f"--pool.parallel.{name}" if own else "--pool.parallel"
            raise ConfigError(
                f"{which} gives {len(values)} counts for {devices} devices; give one count, or one per device"
            )
        return values


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


def build_replicas(settings: PoolSettings, models: Mapping[str, registry.ModelChoice]) -> dict[str, list[Replica]]:
    """Every replica the settings ask for: for each service in `models`, one per device, each with its
    parallel count, loaded with its model spec and preset."""
    if settings.backend == "ray":
        from audionet.lib.miner.pool.ray_actors import ray_replicas

        return ray_replicas(settings, models)
    devices = resolve_devices(settings.devices, flag="--pool.devices")
    replicas = {}
    for name, model in models.items():
        service = registry.get(name)
        parallel = settings.parallel_counts(name, len(devices))
        backends = [
            service.load_backend(model.spec, device=d, dtype=settings.dtype, preset=model.preset) for d in devices
        ]
        replicas[name] = local_replicas(service, backends, parallel)
    return replicas


def pool_label(replicas: Mapping[str, Sequence[Replica]]) -> str:
    """The timer's own device: the one device label when every replica shares it, else "pool"."""
    labels = {replica.name for group in replicas.values() for replica in group}
    return labels.pop() if len(labels) == 1 else POOL_LABEL
