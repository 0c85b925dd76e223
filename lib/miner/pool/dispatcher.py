"""The miner's scheduler: every service's line and replicas behind one `Pool`, what the app awaits.

    pool = Pool({"tts": [LocalReplica(TTS, backend0, 2, ...), LocalReplica(TTS, backend1, 1, ...)]}, timer)
    async with pool.place("tts", caller) as place:   # a place in line (503 at once when there is none for it)
        request = await place.parse(body)            # its text measured, in a worker thread
        result = await place.generate(request)       # audio, elapsed, device, model, label
    result = await pool.run("tts", request, priority=stake)   # the same for a request already parsed

Per service one `ServiceDispatcher` does it all on the event loop, driven by events (an arrival, a completion,
a waiter that leaves), never by polling:

* the line and what it admits (`line`): stake order, places that follow stake, `max_waiting` beyond the slots,
  a request's length by the backend's own reckoning and whether it can finish in time;
* dispatch ("weighted", the miner's): the whole line is planned with `lib.core.dispatch.plan` on every slot, using
  each replica's measured seconds per audio second; every free slot that the plan fills now starts the next
  request in line, fastest slot first (a request that would finish sooner on a busy fast replica waits for it).
  "round-robin" binds request i to replica i mod n (benchmarks only: docs/methodology.md#parallel-requests-per-gpu);
* every generation is bounded by the service's timeout (`timeouts`): past it, or when its caller leaves,
  the request is abandoned: its caller gets a 503 at once (or nothing, if gone) and its `Stop` is set
  (`lib.core.stop`). A backend that can stop (espeak-ng, Kokoro's ONNX runs) ends within one step; one that
  cannot finishes its call, and its slot counts as busy until then, because it is.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Optional, TypeVar

from audionet.lib.core.dispatch import ROUND_ROBIN, WEIGHTED, Slots, check_policy, estimate, plan
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stopped
from audionet.lib.core.timing import Timer
from audionet.lib.miner.limits import ANONYMOUS, Caller
from audionet.lib.miner.pool.line import Line, Ticket, answer_length, check_in_time
from audionet.lib.miner.pool.replica import Replica, Result, calibrate

MAX_LOOKAHEAD = 64  # requests of the line planned ahead
MAX_WAITING = 8  # the miner's default --miner.max_waiting
T = TypeVar("T")


class ServiceDispatcher:
    """The line of one service (a ticket is a request's place in it), its replicas, and the dispatcher
    between them (every method runs on the event loop)."""

    def __init__(
        self,
        service,
        replicas: Sequence[Replica],
        timer: Timer,
        policy: str = WEIGHTED,
        max_waiting: int = MAX_WAITING,
        timeout_s: Optional[float] = None,
    ):
        if not replicas:
            raise ValueError(f"no replica for {service.name}")
        if max_waiting < 0:
            raise ValueError("max_waiting must be >= 0")
        self.service, self.replicas, self.timer, self.policy = service, list(replicas), timer, check_policy(policy)
        self.max_waiting = max_waiting
        self.timeout_s = service.timeout_s if timeout_s is None else timeout_s
        self.line = Line()
        self._rotation = itertools.cycle(self.replicas)

    @property
    def capacity(self) -> int:
        return sum(replica.parallel for replica in self.replicas)

    @property
    def places(self) -> int:
        """Places in all: the slots and `max_waiting` beyond them."""
        return self.capacity + self.max_waiting

    @property
    def busy(self) -> int:
        """Slots generating now (abandoned requests included until their backend returns)."""
        return sum(len(replica.running) for replica in self.replicas)

    @property
    def waiting(self) -> int:
        """Requests in line, being parsed or parsed."""
        return len(self.line)

    @property
    def room(self) -> int:
        """How many may be in line now: `max_waiting` beyond the slots, less the slots still generating."""
        return self.places - self.busy

    def estimate(self, replica: Replica) -> float:
        return estimate(replica.speed, [r.speed for r in self.replicas])

    def enter(self, caller: Caller) -> Ticket:
        """`caller`'s place in line for a request about to be parsed (`Line.enter`: 503 at once when there is none
        for it). Give the ticket to `submit`, and to `leave` at the end."""
        return self.line.enter(caller, self.places, self.room, self.service.name)

    def parse(self, ticket: Ticket, body: bytes) -> ServiceRequest:
        """The request in `body` (`Service.parse`) and, for a long one, its length by the backend's own reckoning
        (`line.answer_length`: 400 past the limit), kept on `ticket`. Runs in a worker thread."""
        request = self.service.parse(body)
        ticket.answer_s = answer_length(self.service, self.replicas, request)
        return request

    async def prepare(self, ticket: Ticket, work: Awaitable[T]) -> T:
        """The result of `work` (the request's parsing), unless `ticket` is displaced first: then its 503 at once
        (the work is dropped)."""
        task = asyncio.ensure_future(work)
        await asyncio.wait({task, ticket.started}, return_when=asyncio.FIRST_COMPLETED)
        if ticket.started.done():
            task.cancel()
            task.add_done_callback(lambda done: done.cancelled() or done.exception())  # retrieved: nobody waits
            raise ticket.started.exception() or WireError("miner is busy", status=503)
        return task.result()

    async def submit(self, ticket: Ticket, request: ServiceRequest) -> Result:
        """Put `request` on its ticket: wait in line (by stake), generate on the replica the plan picks, within the
        timeout. WireError 503 when displaced, when even the fastest replica would not finish before the timeout
        at its measured speed, and when the generation outlives the timeout; cancelling the caller's task takes a
        waiter out of the line (never started) or abandons its work."""
        loop = asyncio.get_running_loop()
        ticket.request, ticket.size = request, max(0.0, self.service.planned_seconds(request), ticket.answer_s or 0.0)
        ticket.stop.max_audio_s = self.service.answer_limit_s  # a backend that reports its audio stops past it
        check_in_time(self.service, self.replicas, ticket.size, self.timeout_s)
        if self.policy == ROUND_ROBIN:
            ticket.bound = next(self._rotation)
        self.dispatch()
        try:
            replica, work = await ticket.started
        except asyncio.CancelledError:
            self.leave(ticket)
            raise
        # One future the work or the timeout settles (cheaper than wait_for around a shield): the caller is
        # answered at the timeout while the work, abandoned, goes on to its own end.
        answer = loop.create_future()
        work.add_done_callback(lambda _: answer.done() or answer.set_result(None))
        timer = loop.call_later(self.timeout_s, lambda: answer.done() or answer.set_exception(TimeoutError()))
        try:
            await answer
        except TimeoutError:
            ticket.stop.set(f"it outlived the {self.timeout_s:g} s timeout")
            raise WireError(
                f"{self.service.name} generation did not finish within {self.timeout_s:g} s: abandoned",
                status=503,
                spent=True,
            ) from None
        except asyncio.CancelledError:
            ticket.stop.set("its caller left")
            raise
        finally:
            timer.cancel()
        try:
            audio, elapsed = work.result()
        except Stopped as error:  # set elsewhere (a shutdown): not the caller's fault
            raise WireError(f"{self.service.name} generation was stopped: {error}", status=503) from None
        return Result(audio, elapsed, replica.hardware, replica.model_id, replica.name)

    def leave(self, ticket: Ticket) -> None:
        """The request is done with the line (refused, answered or gone): a ticket still in it gives its place
        back at once; a generating one keeps it until its backend returns."""
        if self.line.leave(ticket):
            self.line.release(ticket)
            self.dispatch()  # the place it held may let the next request start

    async def run(self, request: ServiceRequest, priority: float = 0.0) -> Result:
        """`enter`, `submit` and `leave` for a request already parsed (benchmarks and tests)."""
        ticket = self.enter(Caller("", priority) if priority else ANONYMOUS)
        try:
            return await self.submit(ticket, request)
        finally:
            self.leave(ticket)

    def dispatch(self) -> None:
        """Start every request the plan puts on a slot free now (nothing to do while no slot is free)."""
        for ticket in self.line:
            if ticket.started.cancelled():  # its caller left a moment ago; its own handler takes it out too
                self.leave(ticket)
        ready = self.line.ready()
        if not ready or all(replica.free == 0 for replica in self.replicas):
            return
        if self.policy == ROUND_ROBIN:
            for ticket in ready:
                if ticket.bound is not None and ticket.bound.free > 0:
                    self._start(ticket, ticket.bound)
            return
        speeds, waiting, assignment = self._plan()
        # The free slots the plan fills now take the next requests in line, fastest first: the same work gets
        # done as soon, and the order of the line is kept.
        now_slots = sorted((speeds[i], i) for i, start in assignment if start == 0.0)
        for ticket, (_speed, index) in zip(waiting, now_slots):
            self._start(ticket, self.replicas[index])

    def _plan(self) -> tuple[list[float], list[Ticket], list[tuple[int, float]]]:
        """(speed per replica, the line's first MAX_LOOKAHEAD requests, where and when each would start)."""
        now = time.monotonic()
        speeds = [self.estimate(replica) for replica in self.replicas]
        waiting = self.line.ready()[:MAX_LOOKAHEAD]
        slots = [Slots(r.ready_times(now), s) for r, s in zip(self.replicas, speeds)]
        return speeds, waiting, plan(slots, [ticket.size for ticket in waiting])

    def _start(self, ticket: Ticket, replica: Replica) -> None:
        self.line.start(ticket)
        began = time.monotonic()
        replica.running[ticket.id] = (began, ticket.size * self.estimate(replica))
        work = replica.submit(ticket.request, ticket.stop)
        work.add_done_callback(lambda done: self._finished(ticket, replica, began, done))
        ticket.started.set_result((replica, work))

    def _finished(self, ticket: Ticket, replica: Replica, began: float, work: asyncio.Future) -> None:
        self.line.release(ticket)
        stage, seconds, audio_s = replica.finished(ticket.id, work, time.monotonic() - began, ticket.stop, ticket.size)
        self.timer.record(self.service.name, stage, seconds, audio_s, device=replica.name)  # the replica's own key
        if replica.name != self.timer.device:  # the miner-wide key counts every device
            self.timer.record(self.service.name, stage, seconds, audio_s)
        self.dispatch()

    def describe(self) -> list[dict]:
        """Each replica's state; `waiting` is how many in line the current plan puts there."""
        for replica in self.replicas:
            replica.planned = 0
        if self.policy == WEIGHTED and self.line.ready():
            for index, _start in self._plan()[2]:
                self.replicas[index].planned += 1
        return [replica.describe() for replica in self.replicas]


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
    """Every service's line and replicas: what the miner awaits (`place`, or `run` for a request already parsed)."""

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

    def names(self) -> list[str]:
        return list(self.dispatchers)

    def places(self, name: str) -> int:
        """Places in `name`'s line in all: its slots and `max_waiting` beyond them."""
        return self.dispatchers[name].places

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

    def calibrate(self) -> None:
        """Time each replica's warm-ups (blocking, at start-up), where a dispatcher has a choice."""
        for dispatcher in self.dispatchers.values():
            if len(dispatcher.replicas) >= 2 and dispatcher.policy == WEIGHTED:
                calibrate(dispatcher.service.name, dispatcher.replicas)

    def replicas(self) -> list[Replica]:
        return [replica for dispatcher in self.dispatchers.values() for replica in dispatcher.replicas]

    def close(self) -> None:
        for replica in self.replicas():
            replica.close()
