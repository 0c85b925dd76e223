"""One model replica: one backend of one service on one device, with `parallel` slots.

The slots share the one loaded model (several requests at once on one copy): loading a model twice
on one GPU was slower than one copy serving two requests in the parallel-requests study (docs/methodology.md#parallel-requests-per-gpu). A replica
knows what the dispatcher needs (free slots, when busy slots should free, its measured speed) and
runs a request somewhere: `LocalReplica` in its own worker threads on this host,
`audionet.lib.miner.pool.ray_actors.RayReplica` in a Ray actor. It counts what became of each request it ran
(served, failed, abandoned, refused) and measures its speed on the ones served.

**Speed from abandoned requests.** A replica that has finished nothing yet learns its speed from a request
abandoned at the timeout (the seconds it ran for the audio it made, or, having made none, for the audio it was
planned to make), so a fresh miner refuses the next such request instead of running it to the timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Optional

from audionet.lib.core.audio import Audio
from audionet.lib.core.devices import bind_cuda
from audionet.lib.core.dispatch import Speed
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stop, running_under
from audionet.models.base import Backend

CALIBRATION_RUNS = 3  # warm-ups timed per replica at start-up; the fastest is its speed prior
MIN_READY_S = 1e-3  # a busy slot that overran its estimate still frees "soon", never "now"


class Result(NamedTuple):
    audio: Audio
    elapsed: float  # generation seconds, measured where it ran: the signed generation_s
    device: str  # the replica's device kind (GPU name slug), reported on the wire
    model: str
    label: str  # the replica's own device label (timing key, /v1/health)


class Replica:
    """Scheduling state shared by local and Ray replicas; subclasses implement `submit`."""

    def __init__(self, service, parallel: int, label: str, hardware: str, device: str, model_id: str):
        if parallel < 1:
            raise ValueError("a replica needs at least one slot")
        self.service, self.parallel = service, parallel
        self.name = label  # unique per device in this pool: timing keys, /v1/health
        self.hardware = hardware  # what answers report: the device kind (GPU name), for the network view
        self.device, self.model_id = device, model_id
        self.running: dict[int, tuple[float, float]] = {}  # ticket id -> (monotonic start, expected seconds)
        self.planned = 0  # requests waiting in the pool that the last plan put here
        self.speed = Speed()
        self.served = self.failed = self.abandoned = self.refused = 0
        self.longest_s = 0.0  # the longest a request held a slot, abandoned ones included (until their return)

    @property
    def free(self) -> int:
        return self.parallel - len(self.running)

    def ready_times(self, now: float) -> tuple[float, ...]:
        busy = tuple(max(MIN_READY_S, start + expected - now) for start, expected in self.running.values())
        return busy + (0.0,) * self.free

    def submit(self, request: ServiceRequest, stop: Stop) -> asyncio.Future:
        """Start `request`; the future resolves to (audio, generation seconds measured where it ran). `stop` is
        set when nobody waits for the answer any more: a backend that can stop part-way does."""
        raise NotImplementedError

    def finished(
        self, key: int, work: asyncio.Future, seconds: float, stop: Stop, planned_s: float
    ) -> tuple[str, float, Optional[float]]:
        """Count what became of the request `key` (`submit`'s `work`), done after `seconds`, and learn from it; its
        timing: (stage, seconds, audio seconds). `planned_s`: the audio it was planned to make."""
        self.running.pop(key, None)
        self.longest_s = max(self.longest_s, seconds)
        error = None if work.cancelled() else work.exception()  # retrieved even when nobody waits for it
        if stop.is_set():  # nobody waits for it: its time is a speed only for a replica that has none
            self.abandoned += 1
            if self.speed.value is None and seconds > 0:
                self.speed.add(seconds, stop.produced_s if stop.produced_s > 0 else max(planned_s, 1.0))
            return "generation/abandoned", seconds, None
        if isinstance(error, WireError):  # the caller's text, found out while generating (it speaks too long)
            self.refused += 1
            return "generation/refused", seconds, None
        if work.cancelled() or error is not None:
            self.failed += 1
            return "generation/failed", seconds, None
        audio, elapsed = work.result()
        self.served += 1
        self.speed.add(elapsed, audio.seconds)
        return "generation", elapsed, audio.seconds

    def answer_seconds(self, request: ServiceRequest) -> Optional[float]:
        """At least how long this replica's backend would speak its answer to `request` (`Service.answer_seconds`;
        a worker thread); None where it cannot tell (a Ray actor's backend is not here to ask)."""
        return None

    def time_warmup(self) -> float:
        """Seconds for one warm-up call on this replica (blocking; the speed prior at start-up)."""
        raise NotImplementedError

    def attach(self, timer) -> None:
        """Key the backend's stage timings to this replica's device (local replicas only)."""

    def close(self) -> None:
        """Release threads or actors."""

    def describe(self) -> dict:
        return {
            "label": self.name,
            "device": self.device,
            "model": self.model_id,
            "parallel": self.parallel,
            "busy": len(self.running),
            "waiting": self.planned,
            "served": self.served,
            "failed": self.failed,
            "abandoned": self.abandoned,
            "refused": self.refused,
            "longest_s": round(self.longest_s, 3),
            "s_per_audio_s": None if self.speed.value is None else round(self.speed.value, 4),
        }


log = logging.getLogger("pool")


def calibrate(name: str, replicas: list[Replica]) -> None:
    """Time warm-ups per replica (blocking); the fastest of CALIBRATION_RUNS is its speed prior, since one timing
    of a short ticket is mostly noise (a 6 ms warm-up once read 51 ms on a busy core, and the dispatcher then left
    that replica idle)."""
    for replica in replicas:
        replica.speed.prior = min(replica.time_warmup() for _ in range(CALIBRATION_RUNS))
    log.info("%s speed priors (warm-up s): %s", name, ", ".join(f"{r.name}={r.speed.prior:.3f}" for r in replicas))


class LocalReplica(Replica):
    """A backend loaded in this process; its `parallel` slots are its own worker threads."""

    def __init__(self, service, backend: Backend, parallel: int, label: str, hardware: str):
        super().__init__(service, parallel, label, hardware, backend.device, backend.model_id)
        self.backend = backend
        self.executor = ThreadPoolExecutor(
            max_workers=parallel,
            thread_name_prefix=f"{service.name}-{label}",
            initializer=bind_cuda,
            initargs=(backend.device,),
        )

    def _generate(self, request: ServiceRequest, stop: Stop) -> tuple[Audio, float]:
        stop.check()  # abandoned before its thread came free
        started = time.perf_counter()
        with running_under(stop):
            audio = self.service.generate(self.backend, request)
        return audio, time.perf_counter() - started

    def submit(self, request: ServiceRequest, stop: Stop) -> asyncio.Future:
        return asyncio.get_running_loop().run_in_executor(self.executor, self._generate, request, stop)

    def answer_seconds(self, request: ServiceRequest) -> Optional[float]:
        return self.service.answer_seconds(self.backend, request)

    def attach(self, timer) -> None:
        self.backend.measure = timer.stage_hook(self.service.name, device=self.name)

    def time_warmup(self) -> float:
        def timed() -> float:
            started = time.perf_counter()
            self.backend.warmup()
            return time.perf_counter() - started

        return self.executor.submit(timed).result()

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
