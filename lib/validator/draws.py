"""A round's requests, drawn off the event loop: drawing a voice-clone request synthesises its reference
speech offline (seconds of Kokoro on a CPU, per miner), so a draw never runs on the loop, and each query goes
out as soon as its own request is drawn, not after every other miner's.

Each service draws in its own lane, in order, from its own generator spawned from the validator's for the
round: the prompts stay reproducible from the seed, and a slow voice-clone draw holds no TTS or music query.

    lanes = DrawLanes(validator.rng, {name: lambda rng, name=name: service.draw(rng, sources)})
    request = await lanes.draw("vc")       # in a worker thread, after the earlier draws of "vc"
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import numpy as np


class DrawLanes:
    def __init__(self, rng: np.random.Generator, draws: Mapping[str, Callable[[np.random.Generator], object]]):
        """`draws`: per service, what draws one request with a generator."""
        generators = rng.spawn(len(draws))
        self.lanes = {
            name: (draw, generator, asyncio.Lock()) for (name, draw), generator in zip(draws.items(), generators)
        }

    async def draw(self, service: str):
        """The next request of `service`: lanes are first come, first served (asyncio.Lock wakes its waiters in
        order), so the n-th caller gets the n-th draw."""
        draw, generator, lock = self.lanes[service]
        async with lock:
            return await asyncio.to_thread(draw, generator)
