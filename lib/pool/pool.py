"""The miner's device pool: per service, one replica per device, and a dispatcher in front of them.

    pool = Pool({"tts": [LocalReplica(TTS, backend0, 2, ...), LocalReplica(TTS, backend1, 1, ...)]}, timer)
    result = await pool.run("tts", request)      # audio, elapsed, device, model, label

The stake-ordered waiting line (`lib.limiter.PriorityLimiter`, one per service, as many running
as the pool has slots) stays in front: a request reaches `run` once the line lets it through, and
`watch_line` tells the pool how many still wait behind it.

Dispatch ("weighted", the miner's): on every arrival, completion, and every REPLAN_S while a
request waits in the pool, the whole line (requests in the pool, then those still in the stake
line) is planned with `plan.plan` on every slot, using each replica's measured seconds per audio
second; every free slot that the plan fills now starts the next request in line, fastest slot
first. A request that would finish sooner on a busy fast replica waits for it. "round-robin" (for
benchmarks only, the seed-001 client's behaviour) binds request i to replica i mod n.

Every replica's timings are keyed by its own device label (`generation` and its stages), and, when
that is not the timer's own device, also counted in the miner-wide `generation` key.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Optional

from audionet.lib.audio import Audio
from audionet.lib.pool.plan import Slots, plan
from audionet.lib.pool.replica import Replica
from audionet.lib.protocol import ServiceRequest
from audionet.lib.timing import Timer

log = logging.getLogger("pool")
POLICIES = ("weighted", "round-robin")
REPLAN_S = 0.1  # a request waiting for a busy fast slot re-plans this often (the line behind it changes)
MAX_LOOKAHEAD = 64  # requests of the stake line planned ahead
CALIBRATION_RUNS = 3  # warm-ups timed per replica at start-up; the fastest is its speed prior


class Result(NamedTuple):
    audio: Audio
    elapsed: float  # generation seconds, measured where it ran: the signed generation_s
    device: str  # the replica's device kind (GPU name slug), reported on the wire
    model: str
    label: str  # the replica's own device label (timing key, /v1/health)


@dataclass(eq=False)
class Job:
    id: int
    request: ServiceRequest
    size: float  # expected audio seconds
    started: asyncio.Future  # -> (replica, future of (audio, elapsed))
    bound: Optional[Replica] = None  # round-robin only


class ServicePool:
    """The replicas of one service and their dispatcher (every method runs on the event loop)."""

    def __init__(self, service, replicas: Sequence[Replica], timer: Timer, policy: str = "weighted"):
        if not replicas:
            raise ValueError(f"no replica for {service.name}")
        if policy not in POLICIES:
            raise ValueError(f"unknown dispatch policy {policy!r}; use {', '.join(POLICIES)}")
        self.service, self.replicas, self.timer, self.policy = service, list(replicas), timer, policy
        self.queue: list[Job] = []
        self.backlog: Callable[[], int] = lambda: 0
        self._ids = itertools.count()
        self._rotation = itertools.cycle(self.replicas)

    @property
    def capacity(self) -> int:
        return sum(replica.parallel for replica in self.replicas)

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

    async def run(self, request: ServiceRequest) -> Result:
        job = Job(next(self._ids), request, self.size_of(request), asyncio.get_running_loop().create_future())
        if self.policy == "round-robin":
            job.bound = next(self._rotation)
        self.queue.append(job)
        self.dispatch()
        try:
            while not job.started.done():
                await asyncio.wait({job.started}, timeout=REPLAN_S)
                self.dispatch()
        finally:
            if job in self.queue:  # gave up while waiting; once started, the work finishes and frees its slot
                self.queue.remove(job)
        replica, work = job.started.result()
        # shield: a caller that goes away does not free the slot while the worker still computes
        audio, elapsed = await asyncio.shield(work)
        return Result(audio, elapsed, replica.wire_device, replica.model_id, replica.label)

    def dispatch(self) -> None:
        if not self.queue:
            return
        if self.policy == "round-robin":
            for job in list(self.queue):
                if job.bound.free > 0:
                    self._start(job, job.bound)
            return
        now = time.monotonic()
        speeds = [self.estimate(replica) for replica in self.replicas]
        line = [job.size for job in self.queue]
        line += [line[-1]] * min(self.backlog(), MAX_LOOKAHEAD)
        assignment = plan([Slots(r.ready_times(now), s) for r, s in zip(self.replicas, speeds)], line)
        # The free slots the plan fills now take the next requests in line, fastest first. A slot the
        # plan gives to a request still in the stake line goes to one already here: the same work gets
        # done as soon, and the line behind cannot come in while the pool holds all of its places.
        now_slots = sorted((speeds[i], i) for i, start in assignment if start == 0.0)
        for job, (_speed, index) in zip(list(self.queue), now_slots):
            self._start(job, self.replicas[index])
        for replica in self.replicas:
            replica.planned = 0
        for _job, (index, _start) in zip(self.queue, (a for a in assignment if a[1] > 0.0)):
            self.replicas[index].planned += 1  # /v1/health: waiting per device

    def _start(self, job: Job, replica: Replica) -> None:
        self.queue.remove(job)
        began = time.monotonic()
        replica.running[job.id] = (began, job.size * self.estimate(replica))
        work = replica.submit(job.request)
        work.add_done_callback(lambda done: self._finished(job, replica, began, done))
        job.started.set_result((replica, work))

    def _finished(self, job: Job, replica: Replica, began: float, work: asyncio.Future) -> None:
        replica.running.pop(job.id, None)
        name = self.service.name
        if work.cancelled() or work.exception() is not None:
            replica.failed += 1
            self._record(name, "generation/failed", time.monotonic() - began, None, replica.label)
        else:
            audio, elapsed = work.result()
            replica.served += 1
            replica.speed.add(elapsed, audio.seconds)
            self._record(name, "generation", elapsed, audio.seconds, replica.label)
        self.dispatch()

    def _record(self, service: str, stage: str, seconds: float, audio_seconds, label: str) -> None:
        self.timer.record(service, stage, seconds, audio_seconds, device=label)
        if label != self.timer.device:  # the miner-wide key counts every device
            self.timer.record(service, stage, seconds, audio_seconds)

    def calibrate(self) -> None:
        """Time warm-ups per replica (blocking, at start-up); the fastest of CALIBRATION_RUNS is its speed
        prior, since one timing of a short job is mostly noise (a 6 ms warm-up once read 51 ms on a busy
        core, and the dispatcher then left that replica idle). Only where the dispatcher has a choice."""
        if len(self.replicas) < 2 or self.policy != "weighted":
            return
        for replica in self.replicas:
            replica.speed.prior = min(replica.time_warmup() for _ in range(CALIBRATION_RUNS))
        log.info(
            "%s speed priors (warm-up s): %s",
            self.service.name,
            ", ".join(f"{r.label}={r.speed.prior:.3f}" for r in self.replicas),
        )

    def describe(self) -> list[dict]:
        return [replica.describe() for replica in self.replicas]


class Pool:
    """Every service's replicas. `run(name, request)` is what the miner awaits."""

    def __init__(self, replicas: Mapping[str, Sequence[Replica]], timer: Timer, policy: str = "weighted"):
        self.timer = timer
        self.services = {name: ServicePool(group[0].service, group, timer, policy) for name, group in replicas.items()}
        for replica in self.replicas():
            replica.attach(timer)

    def __contains__(self, name: str) -> bool:
        return name in self.services

    def names(self) -> list[str]:
        return list(self.services)

    def capacity(self, name: str) -> int:
        return self.services[name].capacity

    def watch_line(self, name: str, waiting: Callable[[], int]) -> None:
        """How many requests for `name` wait in the stake line in front of the pool (planned ahead)."""
        self.services[name].backlog = waiting

    async def run(self, name: str, request: ServiceRequest) -> Result:
        return await self.services[name].run(request)

    def calibrate(self) -> None:
        for service in self.services.values():
            service.calibrate()

    def replicas(self) -> list[Replica]:
        return [replica for service in self.services.values() for replica in service.replicas]

    def model(self, name: str) -> str:
        return self.services[name].replicas[0].model_id

    def devices(self) -> dict[str, dict]:
        """Per device label, over every service: busy, waiting (planned there), served, failed."""
        out: dict[str, dict] = {}
        for replica in self.replicas():
            row = out.setdefault(
                replica.label, {"device": replica.device, "busy": 0, "waiting": 0, "served": 0, "failed": 0}
            )
            for key in ("busy", "waiting", "served", "failed"):
                row[key] += replica.describe()[key]
        return out

    def close(self) -> None:
        for replica in self.replicas():
            replica.close()
