"""Every service's scheduler (`dispatcher.ServiceDispatcher`) behind one object: what the miner awaits.

pool = Pool({"tts": [LocalReplica(TTS, backend0, 2, ...), LocalReplica(TTS, backend1, 1, ...)]}, timer)
async with pool.place("tts", caller) as place:   # a place in line (503 at once when there is none for it)
    request = await place.parse(body)            # its text measured, in a worker thread
    result = await place.generate(request)       # audio, elapsed, device, model, label
result = await pool.run("tts", request, priority=stake)   # the same for a request already parsed
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Optional

from audionet.lib.core.dispatch import WEIGHTED
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.timing import Timer
from audionet.lib.miner.limits import Caller
from audionet.lib.miner.pool.dispatcher import MAX_WAITING, ServiceDispatcher
from audionet.lib.miner.pool.line import Ticket
from audionet.lib.miner.pool.replica import Replica, Result


class Place:
    """One request's place in one service's line (`Pool.place`): parse its body there, then generate."""

    def __init__(self, dispatcher: ServiceDispatcher, ticket: Ticket):
        self.dispatcher, self.ticket = dispatcher, ticket

    async def parse(self, body: bytes) -> ServiceRequest:
        """The request in `body`, parsed and measured in a worker thread; its 503 at once when displaced first."""
        return await self.dispatcher.prepare(self.ticket, asyncio.to_thread(self.dispatcher.parse, self.ticket, body))

    async def generate(self, request: ServiceRequest) -> Result:
        """Wait in line, then generate `request` within the service's timeout (`ServiceDispatcher.submit`)."""
        return await self.dispatcher.submit(self.ticket, request)


class Pool:
    """Every service's line and replicas. `run(name, request, priority)` is what the miner awaits."""

    def __init__(
        self,
        replicas: Mapping[str, Sequence[Replica]],
        timer: Timer,
        policy: str = WEIGHTED,
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

    @asynccontextmanager
    async def place(self, name: str, caller: Caller) -> AsyncIterator[Place]:
        """`caller`'s place in `name`'s line, or WireError 503 at once (its share held, or the line full and
        it has no more stake than the last); the place is given back on leaving the block (a generating request
        keeps its slot until its backend returns)."""
        dispatcher = self.dispatchers[name]
        ticket = dispatcher.enter(caller)
        try:
            yield Place(dispatcher, ticket)
        finally:
            dispatcher.leave(ticket)

    async def run(self, name: str, request: ServiceRequest, priority: float = 0.0) -> Result:
        return await self.dispatchers[name].run(request, priority)

    def places(self, name: str) -> int:
        """Places in `name`'s line in all: its slots and `max_waiting` beyond them."""
        return self.dispatchers[name].places

    def status(self, name: str) -> dict:
        """`name`'s model, slots generating, requests in line and each replica's state."""
        dispatcher = self.dispatchers[name]
        return {
            "model": self.model(name),
            "busy": dispatcher.busy,
            "waiting": dispatcher.waiting,
            "replicas": dispatcher.describe(),
        }

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
