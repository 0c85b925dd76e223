"""The miner's scheduler: per service, one stake-ordered waiting line in front of one replica per device.

    pool = Pool({"tts": [LocalReplica(TTS, backend0, 2, ...), LocalReplica(TTS, backend1, 1, ...)]}, timer)
    result = await pool.run("tts", request, priority=stake)   # audio, elapsed, device, model, label

One scheduler does it all, on the event loop, driven by events (an arrival, a completion, a waiter that
leaves), never by polling:

* the line (`line.Line`): highest stake first, first come first served among equals; at most
  `max_waiting` wait beyond the pool's slots, then a caller with more stake than the last in line takes
  that place (the displaced waiter gets a 503), otherwise the caller gets the 503;
* a waiter whose caller goes away (the miner cancels its `run` when the client disconnects) leaves the
  line at once and its work is never started;
* dispatch ("weighted", the miner's): the whole line is planned with `plan.plan` on every slot, using
  each replica's measured seconds per audio second; every free slot that the plan fills now starts the
  next request in line, fastest slot first. A request that would finish sooner on a busy fast replica
  waits for it. "round-robin" (for benchmarks only, what the parallel-requests study's client did, docs/methodology.md#parallel-requests-per-gpu) binds request i to
  replica i mod n;
* every generation is bounded by the service's timeout (`timeouts`): past it, or when its caller leaves,
  the request is abandoned: its caller gets a 503 at once (or nothing, if gone) and its `Stop` is set
  (`lib.stop`). A backend that can stop (espeak-ng, Kokoro's ONNX runs) ends within one step; one that
  cannot finishes its call, and its slot counts as busy until then, because it is.

Every replica's timings are keyed by its own device label (`generation` and its stages), and, when
that is not the timer's own device, also counted in the miner-wide `generation` key.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stop, Stopped
from audionet.lib.core.timing import Timer
from audionet.lib.miner.pool.line import Line
from audionet.lib.miner.pool.plan import Slots, plan
from audionet.lib.miner.pool.replica import Replica

log = logging.getLogger("pool")
POLICIES = ("weighted", "round-robin")
MAX_LOOKAHEAD = 64  # requests of the line planned ahead
MAX_WAITING = 8  # the miner's default --miner.max_waiting
CALIBRATION_RUNS = 3  # warm-ups timed per replica at start-up; the fastest is its speed prior


class Result(NamedTuple):
    audio: Audio
    elapsed: float  # generation seconds, measured where it ran: the signed generation_s
    device: str  # the replica's device kind (GPU name slug), reported on the wire
    model: str
    label: str  # the replica's own device label (timing key, /v1/health)


@dataclass(eq=False)
class Ticket:
    id: int
    request: ServiceRequest
    size: float  # expected audio seconds
    priority: float  # the caller's stake
    started: asyncio.Future  # -> (replica, future of (audio, elapsed))
    stop: Stop = field(default_factory=Stop)
    bound: Optional[Replica] = None  # round-robin only

    def refuse(self, error: WireError) -> None:
        """Displaced from the line: the caller gets `error`."""
        if not self.started.done():
            self.started.set_exception(error)


class ServiceDispatcher:
    """The line of one service (a ticket is a request's place in it), its replicas, and the dispatcher
    between them (every method runs on the event loop)."""

    def __init__(
        self,
        service,
        replicas: Sequence[Replica],
        timer: Timer,
        policy: str = "weighted",
        max_waiting: int = MAX_WAITING,
        timeout_s: Optional[float] = None,
    ):
        if not replicas:
            raise ValueError(f"no replica for {service.name}")
        if policy not in POLICIES:
            raise ValueError(f"unknown dispatch policy {policy!r}; use {', '.join(POLICIES)}")
        if max_waiting < 0:
            raise ValueError("max_waiting must be >= 0")
        self.service, self.replicas, self.timer, self.policy = service, list(replicas), timer, policy
        self.max_waiting = max_waiting
        self.timeout_s = service.timeout_s if timeout_s is None else timeout_s
        self.line = Line()
        self.held = 0  # places held for requests being parsed
        self._ids = itertools.count()
        self._rotation = itertools.cycle(self.replicas)

    @property
    def capacity(self) -> int:
        return sum(replica.parallel for replica in self.replicas)

    @property
    def busy(self) -> int:
        """Slots generating now (abandoned requests included until their backend returns)."""
        return sum(len(replica.running) for replica in self.replicas)

    @property
    def waiting(self) -> int:
        return len(self.line)

    @property
    def room(self) -> int:
        """How many may wait now: `max_waiting` beyond the slots, less the slots still generating."""
        return self.capacity + self.max_waiting - self.busy

    @contextmanager
    def place_held(self, priority: float) -> Iterator[None]:
        """Hold a place in line while the request is parsed (its text measured), or refuse it (WireError 503)
        at once if the line has none: a burst is answered before its texts are measured. The line itself
        decides when `run` joins it."""
        self.line.check_room(priority, self.room - self.held)
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1

    def size_of(self, request: ServiceRequest) -> float:
        low, high = self.service.expected_seconds(request)
        return max(0.0, (low + high) / 2)

    def estimate(self, replica: Replica) -> float:
        """Seconds per audio second: measured, else the warm-up prior scaled like the measured replicas,
        else (nothing known) the fastest measured or 1: an unmeasured replica is tried, then measured."""
        if replica.speed.value is not None:
            return replica.speed.value
        measured = [r.speed for r in self.replicas if r.speed.value is not None]
        ratios = [s.value / s.prior for s in measured if s.prior]
        if replica.speed.prior is not None and (ratios or not measured):
            return replica.speed.prior * (statistics.median(ratios) if ratios else 1.0)
        return min((s.value for s in measured), default=1.0)

    async def run(self, request: ServiceRequest, priority: float = 0.0) -> Result:
        """Wait in line (by `priority`), generate on the replica the plan picks, within the timeout.
        WireError 503 when the line is full, when displaced, and when the generation outlives the timeout;
        cancelling the caller's task takes a waiter out of the line (never started) or abandons its work."""
        loop = asyncio.get_running_loop()
        ticket = Ticket(next(self._ids), request, self.size_of(request), priority, loop.create_future())
        if self.policy == "round-robin":
            ticket.bound = next(self._rotation)
        self.line.join(ticket, self.room)
        self.dispatch()
        try:
            replica, work = await ticket.started
        except asyncio.CancelledError:
            if self.line.leave(ticket):
                self.dispatch()  # the place it held may let the next request start
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
                f"{self.service.name} generation did not finish within {self.timeout_s:g} s: abandoned", status=503
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

    def dispatch(self) -> None:
        """Start every request the plan puts on a slot free now (nothing to do while no slot is free)."""
        for ticket in self.line:
            if ticket.started.cancelled():  # its caller left a moment ago; its own handler takes it out too
                self.line.leave(ticket)
        if not len(self.line) or all(replica.free == 0 for replica in self.replicas):
            return
        if self.policy == "round-robin":
            for ticket in self.line:
                if ticket.bound.free > 0:
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
        waiting = list(self.line)[:MAX_LOOKAHEAD]
        slots = [Slots(r.ready_times(now), s) for r, s in zip(self.replicas, speeds)]
        return speeds, waiting, plan(slots, [ticket.size for ticket in waiting])

    def _start(self, ticket: Ticket, replica: Replica) -> None:
        self.line.leave(ticket)
        began = time.monotonic()
        replica.running[ticket.id] = (began, ticket.size * self.estimate(replica))
        work = replica.submit(ticket.request, ticket.stop)
        work.add_done_callback(lambda done: self._finished(ticket, replica, began, done))
        ticket.started.set_result((replica, work))

    def _finished(self, ticket: Ticket, replica: Replica, began: float, work: asyncio.Future) -> None:
        replica.running.pop(ticket.id, None)
        name = self.service.name
        error = None if work.cancelled() else work.exception()  # retrieved even when nobody waits for it
        if ticket.stop.is_set():  # nobody waits for it; its time says nothing about the replica's speed
            replica.abandoned += 1
            self._record(name, "generation/abandoned", time.monotonic() - began, None, replica.name)
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
        """Time warm-ups per replica (blocking, at start-up); the fastest of CALIBRATION_RUNS is its speed
        prior, since one timing of a short ticket is mostly noise (a 6 ms warm-up once read 51 ms on a busy
        core, and the dispatcher then left that replica idle). Only where the dispatcher has a choice."""
        if len(self.replicas) < 2 or self.policy != "weighted":
            return
        for replica in self.replicas:
            replica.speed.prior = min(replica.time_warmup() for _ in range(CALIBRATION_RUNS))
        log.info(
            "%s speed priors (warm-up s): %s",
            self.service.name,
            ", ".join(f"{r.name}={r.speed.prior:.3f}" for r in self.replicas),
        )

    def describe(self) -> list[dict]:
        """Each replica's state; `waiting` is how many in line the current plan puts there."""
        for replica in self.replicas:
            replica.planned = 0
        if self.policy == "weighted" and len(self.line):
            for index, _start in self._plan()[2]:
                self.replicas[index].planned += 1
        return [replica.describe() for replica in self.replicas]


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

    def place_held(self, name: str, priority: float):
        return self.dispatchers[name].place_held(priority)

    def calibrate(self) -> None:
        for dispatcher in self.dispatchers.values():
            dispatcher.calibrate()

    def replicas(self) -> list[Replica]:
        return [replica for dispatcher in self.dispatchers.values() for replica in dispatcher.replicas]

    def model(self, name: str) -> str:
        return self.dispatchers[name].replicas[0].model_id

    def devices(self) -> dict[str, dict]:
        """Per device label, over every service: busy, waiting (planned there), served, failed, abandoned."""
        counts = ("busy", "waiting", "served", "failed", "abandoned")
        out: dict[str, dict] = {}
        for state in (row for dispatcher in self.dispatchers.values() for row in dispatcher.describe()):
            row = out.setdefault(state["label"], {"device": state["device"]} | dict.fromkeys(counts, 0))
            for key in counts:
                row[key] += state[key]
        return out

    def close(self) -> None:
        for replica in self.replicas():
            replica.close()
