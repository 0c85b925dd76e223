"""The waiting line of one service, in stake order: highest stake first, first come first served among equals.

When the line is full, a caller with more stake than the last in line takes that place and the displaced
waiter gets a 503, so a line full of low-stake requests cannot lock out a higher-stake validator; a caller
with no more stake than the last in line is refused itself. A waiter that leaves (its client disconnected)
is taken out at once, so its place is free for the next caller.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Protocol

from audionet.lib.core.errors import WireError


class Waiter(Protocol):
    id: int  # arrival order
    priority: float  # the caller's stake

    def refuse(self, error: WireError) -> None: ...


def _order(waiter: Waiter) -> tuple[float, int]:
    return -waiter.priority, waiter.id


class Line:
    def __init__(self) -> None:
        self._waiters: list[Waiter] = []  # in line order

    def __len__(self) -> int:
        return len(self._waiters)

    def __iter__(self) -> Iterator[Waiter]:
        return iter(list(self._waiters))

    def __contains__(self, waiter: Waiter) -> bool:
        return waiter in self._waiters

    def check_room(self, priority: float, room: int) -> None:
        """WireError 503 if a caller with `priority` would be refused now; `room` is how many may wait."""
        if len(self._waiters) >= room and (not self._waiters or self._waiters[-1].priority >= priority):
            raise WireError("miner is busy: the waiting line for this service is full", status=503)

    def join(self, waiter: Waiter, room: int) -> None:
        """Put `waiter` in its place; `room` is how many may wait now. When the line is full, the last in line
        makes way for a caller with more stake (it is refused with 503), else `waiter` is refused (WireError 503)."""
        self.check_room(waiter.priority, room)
        if len(self._waiters) >= room:
            last = self._waiters.pop()
            last.refuse(WireError("miner is busy: a caller with more stake took this place in line", status=503))
        bisect.insort(self._waiters, waiter, key=_order)

    def leave(self, waiter: Waiter) -> bool:
        """Take `waiter` out of the line; False if it was not in it (it has started, or was refused)."""
        try:
            self._waiters.remove(waiter)
        except ValueError:
            return False
        return True
