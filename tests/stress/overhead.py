"""The scheduler's queueing overhead: bursts of requests through one replica with one slot (a real espeak-ng
backend that notes when each generation starts and ends), and the time the scheduler adds to each request beyond
its generation and its wait for the slot. Only `measure_overhead` and `Stamped` are needed to measure another
scheduler the same way (issue 24 measured the one before the line moved into the pool with them)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from audionet.lib.core.timing import Timer
from audionet.lib.miner.pool import Pool, local_replicas
from audionet.lib.services import TTS, TTSRequest
from audionet.models.base import SpeechSynthesizer
from audionet.models.baselines.espeak import EspeakSynthesizer


class Stamped(SpeechSynthesizer):
    """espeak-ng that notes when each request's generation starts and ends (perf_counter)."""

    model_id = "baseline:espeak"

    def __init__(self) -> None:
        self.inner, self.stamps = EspeakSynthesizer(), {}

    def synthesize(self, text, *, voice=None, seed=0):
        started = time.perf_counter()
        audio = self.inner.synthesize(text, voice=voice, seed=seed)
        self.stamps[text] = (started, time.perf_counter())
        return audio


async def timed_burst(submit, requests: list) -> dict:
    """Send every request at once; per request (submitted, returned)."""

    async def one(request):
        submitted = time.perf_counter()
        await submit(request)
        return request.text, (submitted, time.perf_counter())

    return dict(await asyncio.gather(*(one(r) for r in requests)))


def overhead_ms(calls: dict, stamps: dict) -> list[float]:
    """Per request, the time the scheduler added on one slot: from when the request could have started (it was
    sent and the slot was free) to its start, plus from its end to its caller resuming."""
    order = sorted(stamps, key=lambda text: stamps[text][0])
    out, slot_free = [], 0.0
    for text in order:
        (start, end), (submitted, returned) = stamps[text], calls[text]
        out.append(1000 * ((start - max(submitted, slot_free)) + (returned - end)))
        slot_free = end
    return out


def measure_overhead(make_submit, backend: Stamped, bursts=(1, 8, 32), rounds: int = 5) -> dict:
    """Queueing overhead (ms per request: mean and max) of bursts through one replica with one slot."""
    rng, rows = np.random.default_rng(0), {}
    submit = make_submit()
    for size in bursts:
        values = []
        for round_ in range(rounds):
            requests = [
                TTSRequest(text=f"Burst {size} round {round_} request {i}.", seed=int(rng.integers(1000)))
                for i in range(size)
            ]
            backend.stamps.clear()
            calls = asyncio.run(timed_burst(submit, requests))
            values += overhead_ms(calls, backend.stamps)
        rows[str(size)] = {"mean_ms": float(np.mean(values)), "max_ms": float(np.max(values)), "n": len(values)}
    return rows


def run_overhead(bursts=(1, 8, 32), rounds: int = 5) -> dict:
    """The scheduler (`lib.miner.pool.dispatcher`) with a real espeak-ng replica, one slot."""
    backend = Stamped()

    def make_submit():
        pool = Pool({TTS.name: local_replicas(TTS, [backend], [1])}, Timer("overhead", device="cpu"), max_waiting=64)
        return lambda request: pool.run(TTS.name, request, 0.0)

    return measure_overhead(make_submit, backend, bursts, rounds)
