"""Pacing a kind of request (the miner's /v1/health) to a rate: over it, callers wait their turn.

`Pacer` is one rate; `Pacers` is one rate per key (an address group, a caller), with a bounded table: the key
heard from least recently is forgotten first, and a forgotten key starts again with a full burst (what any
number of keys can take together is bounded by the pacer in front of them, if any).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict


class Pacer:
    """At most `rate` turns per second, in bursts of up to `burst`; a caller over the rate waits its turn, and
    one that would wait longer than `max_wait_s` waits that long and is then told no (so a client that is
    turned away cannot come back any sooner than one that is served)."""

    def __init__(self, rate: float, burst: int, max_wait_s: float, clock=time.monotonic):
        self.interval, self.slack, self.max_wait_s, self.clock = 1.0 / rate, (burst - 1) / rate, max_wait_s, clock
        self.next_turn = 0.0  # when the rate allows the next turn, bursts aside

    async def turn(self) -> bool:
        now = self.clock()
        self.next_turn = max(self.next_turn, now)
        wait = self.next_turn - self.slack - now
        if wait > self.max_wait_s:
            await asyncio.sleep(self.max_wait_s)
            return False
        self.next_turn += self.interval
        if wait > 0:
            await asyncio.sleep(wait)
        return True


class Pacers:
    """A `Pacer` per key, at most `size` keys remembered."""

    def __init__(self, rate: float, burst: int, max_wait_s: float, size: int = 4096, clock=time.monotonic):
        self.rate, self.burst, self.max_wait_s, self.size, self.clock = rate, burst, max_wait_s, size, clock
        self.pacers: OrderedDict[str, Pacer] = OrderedDict()

    def __len__(self) -> int:
        return len(self.pacers)

    async def turn(self, key: str) -> bool:
        pacer = self.pacers.pop(key, None) or Pacer(self.rate, self.burst, self.max_wait_s, self.clock)
        self.pacers[key] = pacer  # the most recent last
        while len(self.pacers) > self.size:
            self.pacers.popitem(last=False)
        return await pacer.turn()
