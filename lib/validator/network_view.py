"""The network's view per GPU: every miner's signed `generation_s`, grouped by the device the miner
reports and the service, logged as `network/<gpu>/<service>/<field>` (W&B and JSONL) and as one
table: a per-GPU speed table of the whole subnet, from the validator's own traffic.

The device string comes from the wire. It is signed by the miner but chosen by it, so it is
treated as hostile: slugified and capped in length, and only the first `MAX_GPUS` distinct names
get their own key; later ones are counted as "other". A miner can neither blow up the number of
W&B keys nor the validator's memory, and one that lies about its GPU only moves that GPU's row.
"""

from __future__ import annotations

import re
import threading
from typing import Optional

from audionet.lib.core.timing import Timer

MAX_GPUS = 32
MAX_NAME = 48
OTHER = "other"
UNKNOWN = "unknown"
FIELDS = ("count", "avg_s", "min_s", "max_s", "p50_s", "p95_s", "rtf")


def gpu_name(device: str) -> str:
    """A miner-chosen device string as a safe key: lower-case [a-z0-9_-], at most MAX_NAME characters."""
    slug = re.sub(r"[^a-z0-9_]+", "-", str(device)[: 4 * MAX_NAME].lower()).strip("-")
    return slug[:MAX_NAME].strip("-") or UNKNOWN


class NetworkView:
    """A telemetry source (`lib.core.telemetry.Source`): `record` from the validator's round, `scalars`
    and `rows` from the telemetry thread."""

    name = "network"
    columns = ("gpu", "service", "miners", *FIELDS)

    def __init__(self, max_gpus: int = MAX_GPUS):
        self.max_gpus = max_gpus
        self.timer = Timer("network", device=OTHER)
        self._gpus: set[str] = set()
        self._miners: dict[tuple[str, str], set[int]] = {}
        self._lock = threading.Lock()

    def gpu_key(self, device: str) -> str:
        name = gpu_name(device)
        with self._lock:
            if name in self._gpus or len(self._gpus) < self.max_gpus:
                self._gpus.add(name)
                return name
        return OTHER

    def record(self, device: str, service: str, generation_s: float, audio_seconds: Optional[float], uid: int) -> None:
        """One answer a miner signed; `service` is one of the validator's own service names."""
        gpu = self.gpu_key(device)
        self.timer.record(service, "generation", generation_s, audio_seconds, device=gpu)
        with self._lock:
            self._miners.setdefault((gpu, service), set()).add(int(uid))

    def rows(self) -> list[dict]:
        with self._lock:
            miners = {key: len(uids) for key, uids in self._miners.items()}
        return [
            {"gpu": key.device, "service": key.service, "miners": miners.get((key.device, key.service), 0)}
            | {field: getattr(stats, field) for field in FIELDS}
            for key, stats in self.timer.snapshot().items()
        ]

    def scalars(self) -> dict[str, float]:
        return {
            f"network/{row['gpu']}/{row['service']}/{field}": row[field]
            for row in self.rows()
            for field in ("miners", *FIELDS)
            if row[field] is not None
        }
