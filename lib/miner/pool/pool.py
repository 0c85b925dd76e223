"""Every service's scheduler (`dispatcher.ServiceDispatcher`) behind one object: what the miner awaits.

pool = Pool({"tts": [LocalReplica(TTS, backend0, 2, ...), LocalReplica(TTS, backend1, 1, ...)]}, timer)
result = await pool.run("tts", request, priority=stake)   # audio, elapsed, device, model, label
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.timing import Timer
from audionet.lib.miner.pool.dispatcher import MAX_WAITING, ServiceDispatcher
from audionet.lib.miner.pool.replica import Replica, Result


class Pool:
    """Every service's line and replicas. `run(name, request, priority)` is what the miner awaits."""

    def __init__(
        self,
        replicas: Mapping[str, Sequence[Replica]],
        timer: Timer,
        policy: str = "weighted",
        max_waiting: int = MAX_WAITING,
        timeouts: Optional[Mapping[str, float]] = None,
    ):
        """`timeouts`: per service, the seconds a generation may take (default: the service's `timeout_s`)."""
        self.timer = timer
        self.dispatchers = {
            name: ServiceDispatcher(group[0].service, group, timer, policy, max_waiting, (timeouts or {}).get(name))
            for name, group in replicas.items()
        }
        for replica in self.replicas():
            replica.attach(timer)

    def __contains__(self, name: str) -> bool:
        return name in self.dispatchers

    def names(self) -> list[str]:
        return list(self.dispatchers)

    def capacity(self, name: str) -> int:
        return self.dispatchers[name].capacity

    async def run(self, name: str, request: ServiceRequest, priority: float = 0.0) -> Result:
        return await self.dispatchers[name].run(request, priority)

    def held(self) -> dict[str, dict[str, int]]:
        """Per caller, the places it holds in every line by stage (parsing, waiting, generating)."""
        out: dict[str, dict[str, int]] = {}
        for dispatcher in self.dispatchers.values():
            for hotkey, stages in dispatcher.held().items():
                row = out.setdefault(hotkey, dict.fromkeys(stages, 0))
                for stage, count in stages.items():
                    row[stage] += count
        return out

    def calibrate(self) -> None:
        for dispatcher in self.dispatchers.values():
            dispatcher.calibrate()

    def replicas(self) -> list[Replica]:
        return [replica for dispatcher in self.dispatchers.values() for replica in dispatcher.replicas]

    def model(self, name: str) -> str:
        return self.dispatchers[name].replicas[0].model_id

    def devices(self) -> dict[str, dict]:
        """Per device label, over every service: busy, waiting (planned there), served, failed, abandoned, refused."""
        counts = ("busy", "waiting", "served", "failed", "abandoned", "refused")
        out: dict[str, dict] = {}
        for state in (row for dispatcher in self.dispatchers.values() for row in dispatcher.describe()):
            row = out.setdefault(state["label"], {"device": state["device"]} | dict.fromkeys(counts, 0))
            for key in counts:
                row[key] += state[key]
        return out

    def close(self) -> None:
        for replica in self.replicas():
            replica.close()
