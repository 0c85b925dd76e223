"""The miner's scheduler: per service, one stake-ordered waiting line in front of one replica per device.

    ticket = dispatcher.enter(Caller(hotkey, stake, share))      # a place in line, or 503 at once
    try:
        request = await dispatcher.prepare(ticket, parse(body))   # 503 at once if displaced meanwhile
        result = await dispatcher.submit(ticket, request)         # audio, elapsed, device, model, label
    finally:
        dispatcher.leave(ticket)

One scheduler does it all, on the event loop, driven by events (an arrival, a completion, a waiter that
leaves), never by polling:

* the line (`line.Line`): highest stake first, first come first served among equals; a request holds its
  place from before its body is parsed; at most `max_waiting` beyond the pool's slots, then a caller with
  more stake than the last in line takes that place, parsing or waiting (the displaced one gets a 503), otherwise
  the caller gets the 503;
* places follow stake (`lib.miner.limits`): one caller holds at most its share of the line's places (parsing,
  waiting and generating), at least one;
* what a request will cost (`line.answer_length`, `line.check_in_time`): its length by the backend's own
  reckoning (400 at once past the limit), and a long request that even the fastest replica would not finish
  within half the timeout, at its measured speed, is refused before it starts;
* a waiter whose caller goes away (the miner cancels its task when the client disconnects) leaves at once;
* dispatch ("weighted", the miner's): the whole line is planned with `lib.core.dispatch.plan` on every slot, using
  each replica's measured seconds per audio second; every free slot that the plan fills now starts the
  next request in line, fastest slot first. A request that would finish sooner on a busy fast replica
  waits for it. "round-robin" (for benchmarks only, what the parallel-requests study's client did, docs/methodology.md#parallel-requests-per-gpu) binds request i to
  replica i mod n;
* every generation is bounded by the service's timeout (`timeouts`): past it, or when its caller leaves,
  the request is abandoned: its caller gets a 503 at once (or nothing, if gone) and its `Stop` is set
  (`lib.core.stop`). A backend that can stop (espeak-ng, Kokoro's ONNX runs) ends within one step; one that
  cannot finishes its call, and its slot counts as busy until then, because it is.

Every replica's timings are keyed by its own device label (`generation` and its stages), and, when
that is not the timer's own device, also counted in the miner-wide `generation` key.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Awaitable, Sequence
from typing import Optional, TypeVar

from audionet.lib.core.dispatch import ROUND_ROBIN, WEIGHTED, Slots, check_policy, estimate, plan
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stopped
from audionet.lib.core.timing import Timer
from audionet.lib.miner.limits import ANONYMOUS, LINE_FLOOR, Caller, entitled, percent
from audionet.lib.miner.pool.line import Line, Ticket, answer_length, check_in_time, learn_from_abandoned
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
        self.holding: Counter[str] = Counter()  # places (parsing, waiting, generating) per caller
        self.running: dict[int, Ticket] = {}  # generating, abandoned ones included until their backend returns
        self._ids = itertools.count()
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

    def size_of(self, request: ServiceRequest) -> float:
        return max(0.0, self.service.planned_seconds(request))

    def estimate(self, replica: Replica) -> float:
        return estimate(replica.speed, [r.speed for r in self.replicas])

    def enter(self, caller: Caller) -> Ticket:
        """A place in line for a request about to be parsed, or WireError 503 at once: when `caller` already holds
        its share of this line's places, or when the line is full and it has no more stake than the last in line
        (else that one is displaced, whatever its stage). Give the ticket to `submit`, and to `leave` at the end."""
        limit = entitled(caller.share, self.places, LINE_FLOOR)
        if limit < self.places and self.holding[caller.hotkey] >= limit:  # entitled to all: stake decides alone
            raise WireError(
                f"this caller holds {limit} of the {self.places} places of the {self.service.name} line, its share"
                f" ({percent(caller.share)} of the stake): wait for an answer",
                status=503,
            )
        ticket = Ticket(next(self._ids), caller, asyncio.get_running_loop().create_future())
        displaced = self.line.join(ticket, self.room)
        self.holding[caller.hotkey] += 1
        if displaced is not None:
            self._release(displaced)
        return ticket

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
        ticket.request, ticket.size = request, max(self.size_of(request), ticket.answer_s or 0.0)
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
            self._release(ticket)
            self.dispatch()  # the place it held may let the next request start

    async def run(self, request: ServiceRequest, priority: float = 0.0) -> Result:
        """`enter`, `submit` and `leave` for a request already parsed (benchmarks and tests)."""
        ticket = self.enter(Caller("", priority) if priority else ANONYMOUS)
        try:
            return await self.submit(ticket, request)
        finally:
            self.leave(ticket)

    def held(self) -> dict[str, dict[str, int]]:
        """Per caller, the places it holds by stage (parsing, waiting, generating)."""
        out: dict[str, dict[str, int]] = {}
        for ticket in [*self.line, *self.running.values()]:
            stages = out.setdefault(ticket.caller.hotkey, {"parsing": 0, "waiting": 0, "generating": 0})
            stages[ticket.stage] += 1
        return out

    def _release(self, ticket: Ticket) -> None:
        if not ticket.released:
            ticket.released = True
            self.holding[ticket.caller.hotkey] -= 1
            if self.holding[ticket.caller.hotkey] <= 0:
                del self.holding[ticket.caller.hotkey]

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
        self.line.leave(ticket)
        began = time.monotonic()
        replica.running[ticket.id] = (began, ticket.size * self.estimate(replica))
        self.running[ticket.id] = ticket
        work = replica.submit(ticket.request, ticket.stop)
        work.add_done_callback(lambda done: self._finished(ticket, replica, began, done))
        ticket.started.set_result((replica, work))

    def _finished(self, ticket: Ticket, replica: Replica, began: float, work: asyncio.Future) -> None:
        replica.running.pop(ticket.id, None)
        self.running.pop(ticket.id, None)
        self._release(ticket)
        replica.longest_s = max(replica.longest_s, time.monotonic() - began)
        name = self.service.name
        error = None if work.cancelled() else work.exception()  # retrieved even when nobody waits for it
        if ticket.stop.is_set():  # nobody waits for it: its time is a speed only for a replica that has none
            replica.abandoned += 1
            self._record(name, "generation/abandoned", time.monotonic() - began, None, replica.name)
            learn_from_abandoned(replica, time.monotonic() - began, ticket.stop.produced_s, ticket.size)
        elif isinstance(error, WireError):  # the caller's text, found out while generating (it speaks too long)
            replica.refused += 1
            self._record(name, "generation/refused", time.monotonic() - began, None, replica.name)
        elif work.cancelled() or error is not None:
            replica.failed += 1
            self._record(name, "generation/failed", time.monotonic() - began, None, replica.name)
        else:
            audio, elapsed = work.result()
            replica.served += 1
            replica.speed.add(elapsed, audio.seconds)
            self._record(name, "generation", elapsed, audio.seconds, replica.name)
        self.dispatch()

    def _record(self, service: str, stage: str, seconds: float, audio_seconds, label: str) -> None:
        self.timer.record(service, stage, seconds, audio_seconds, device=label)
        if label != self.timer.device:  # the miner-wide key counts every device
            self.timer.record(service, stage, seconds, audio_seconds)

    def calibrate(self) -> None:
        """Time each replica's warm-ups (blocking, at start-up), where the dispatcher has a choice."""
        if len(self.replicas) >= 2 and self.policy == WEIGHTED:
            calibrate(self.service.name, self.replicas)

    def describe(self) -> list[dict]:
        """Each replica's state; `waiting` is how many in line the current plan puts there."""
        for replica in self.replicas:
            replica.planned = 0
        if self.policy == WEIGHTED and self.line.ready():
            for index, _start in self._plan()[2]:
                self.replicas[index].planned += 1
        return [replica.describe() for replica in self.replicas]
