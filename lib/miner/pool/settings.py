"""The pool's settings, each field its flag (miner and audionet-bench add them with `PoolSettings.add_flags`, read
them with `PoolSettings.from_flags`): devices, parallel counts, the dtype and the replica backend (local or Ray)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import CommaList, Settings, positive_int, setting
from audionet.lib.core.errors import ConfigError

BACKENDS = ("local", "ray")


# argparse type: "2,1" -> (2, 1); repeats are kept (one count per device).
counts = CommaList(convert=positive_int, repeats=True, what="positive count")


MINER_ONLY = ("dtype", "backend", "ray_address", "ray_gpus")  # what audionet-bench's studies have no flag for


@dataclass(frozen=True)
class PoolSettings(Settings):
    """device pool (one model replica per device and service)"""

    devices: str = setting(
        "pool.devices",
        "auto",
        help="comma list of devices, one replica of each service per device: auto (every visible GPU, "
        "else cpu) | cpu | cuda | cuda:N, e.g. cuda:0,cuda:1",
    )
    parallel: Optional[tuple[int, ...]] = setting(
        "pool.parallel",
        (1,),
        type=counts,
        help="requests at once per device: one count for every device, or one per device (e.g. 2,1); "
        "audionet-bench's default: the count each device's sweep recommends",
    )
    parallel_by_service: Mapping[str, tuple[int, ...]] = setting(
        "pool.parallel",
        None,
        per_service=True,
        type=counts,
        help="{title}: per-device counts where they differ from --pool.parallel",
    )
    dtype: str = setting(
        "dtype",
        "auto",
        choices=["auto", "float32", "float16", "bfloat16"],
        help="auto: bfloat16 on CUDA where supported, else float16; float32 on CPU",
    )
    backend: str = setting(
        "pool.backend",
        "local",
        choices=BACKENDS,
        help="local: replicas in this process; ray: replicas are Ray actors (pip install 'audionet[ray]')",
    )
    ray_address: str = setting(
        "ray.address",
        "auto",
        help="with --pool.backend ray: auto (the cluster started on this host by `ray start --head`), "
        "host:port or ray://host:port",
    )
    ray_gpus: Optional[float] = setting(
        "ray.gpus",
        None,
        type=float,
        help="GPUs per GPU replica actor, fractions allowed (default 1/number of services: "
        "one replica of each service per GPU)",
    )

    def __post_init__(self) -> None:
        own = {name: counts for name, counts in self.parallel_by_service.items() if counts}
        object.__setattr__(self, "parallel_by_service", own)

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
