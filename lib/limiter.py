"""Bounded concurrency with a stake-ordered waiting line.

At most `concurrency` requests run at once per service; up to `max_waiting`
more wait, highest priority (stake) first, FIFO among equals. Anything beyond
that is refused at once with 503 instead of piling up memory and latency.
When the line is full, a caller with a higher priority than the last in line
takes that one's place, and the displaced waiter gets the 503: a line full of
low-stake requests cannot lock out a higher-stake validator.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from contextlib import asynccontextmanager

from audionet.lib.errors import WireError


class PriorityLimiter:
    def __init__(self, concurrency: int, max_waiting: int):
        if concurrency < 1 or max_waiting < 0:
            raise ValueError("concurrency must be >= 1 and max_waiting >= 0")
        self.concurrency, self.max_waiting = concurrency, max_waiting
        self._free = concurrency
        self._waiting: list[tuple[float, int, asyncio.Future]] = []
        self._order = itertools.count()

    @property
    def busy(self) -> int:
        return self.concurrency - self._free

    @property
    def waiting(self) -> int:
        return sum(1 for *_, future in self._waiting if not future.done())

    def _release(self) -> None:
        while self._waiting:
            *_, future = heapq.heappop(self._waiting)
            if not future.done():  # skip callers that gave up while waiting
                future.set_result(None)
                return
        self._free += 1

    def _make_room(self, priority: float) -> None:
        """Refuse the last waiter in line (lowest priority, newest among equals) if `priority`
        outranks it; otherwise refuse this caller. Either way with 503."""
        self._waiting = [entry for entry in self._waiting if not entry[2].done()]  # drop those who left
        heapq.heapify(self._waiting)
        last = max(self._waiting, key=lambda entry: entry[:2], default=None)
        if last is None or -last[0] >= priority:
            raise WireError("miner is busy: the waiting line for this service is full", status=503)
        last[2].set_exception(WireError("miner is busy: a caller with more stake took this place in line", 503))

    @asynccontextmanager
    async def slot(self, priority: float = 0.0):
        if self._free > 0 and not self.waiting:
            self._free -= 1
        else:
            if self.waiting >= self.max_waiting:
                self._make_room(priority)
            future = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (-priority, next(self._order), future))
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self._release()  # we were handed the slot just as we gave up
                else:
                    future.cancel()
                raise
        try:
            yield
        finally:
            self._release()
