"""The pool flags (miner and audionet-bench define them here, once) and the typed settings entry points read them
into (`PoolSettings.from_flags`): devices, parallel counts, the replica backend (local or Ray) and the dtype."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.config import CommaList, flag, positive_int
from audionet.lib.core.errors import ConfigError
from audionet.lib.services import registry

BACKENDS = ("local", "ray")


# argparse type: "2,1" -> (2, 1); repeats are kept (one count per device).
counts = CommaList(convert=positive_int, repeats=True, what="positive count")


def add_pool_flags(parser, *, backends: bool = True, parallel_default: Optional[str] = "1") -> None:
    """--pool.devices, --pool.parallel, --pool.parallel.<service> (and, for the miner, --dtype, --pool.backend
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
        "dtype",
        default="auto",
        choices=["auto", "float32", "float16", "bfloat16"],
        help="auto: bfloat16 on CUDA where supported, else float16; float32 on CPU",
    )
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
