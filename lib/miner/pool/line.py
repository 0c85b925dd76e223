"""The waiting line of one service, in stake order: highest stake first, first come first served among equals.

A request takes its place as soon as its caller is verified, before its body is parsed (its text measured):
a *ticket* with no request yet. Parsing and waiting tickets share the line. When the line is full, a caller
with more stake than the last in line takes that place, whatever that one's stage, and the displaced one gets
a 503 at once (a parse still running is dropped); a caller with no more stake than the last in line is refused
itself. A ticket whose caller leaves is taken out at once, so its place is free for the next caller.
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stop
from audionet.lib.miner.places import Caller
from audionet.lib.miner.pool.replica import Replica


@dataclass(eq=False)
class Ticket:
    """One request's place: in line while its body is parsed (`request` None) and while it waits, then on a
    slot while it generates."""

    id: int  # arrival order
    caller: Caller
    started: asyncio.Future  # -> (replica, future of (audio, elapsed)); a WireError when refused
    request: Optional[ServiceRequest] = None
    size: float = 0.0  # expected audio seconds, once parsed
    answer_s: Optional[float] = None  # at least this long, by the backend's own reckoning (`ServiceDispatcher.parse`)
    stop: Stop = field(default_factory=Stop)
    bound: Optional[Replica] = None  # round-robin only
    released: bool = False  # its place counted against its caller no more

    @property
    def priority(self) -> float:
        return self.caller.stake

    @property
    def stage(self) -> str:
        if self.started.done():
            return "generating"
        return "parsing" if self.request is None else "waiting"

    def refuse(self, error: WireError) -> None:
        """Displaced from the line: the caller gets `error`."""
        if not self.started.done():
            self.started.set_exception(error)


def _order(ticket: Ticket) -> tuple[float, int]:
    return -ticket.priority, ticket.id


class Line:
    def __init__(self) -> None:
        self._tickets: list[Ticket] = []  # in line order

    def __len__(self) -> int:
        return len(self._tickets)

    def __iter__(self) -> Iterator[Ticket]:
        return iter(list(self._tickets))

    def __contains__(self, ticket: Ticket) -> bool:
        return ticket in self._tickets

    def ready(self) -> list[Ticket]:
        """The tickets whose request is parsed, in line order: what may start."""
        return [ticket for ticket in self._tickets if ticket.request is not None]

    def join(self, ticket: Ticket, room: int) -> Optional[Ticket]:
        """Put `ticket` in its place; `room` is how many may be in line now. When the line is full, the last in
        line makes way for a caller with more stake (it is refused with 503 and returned), else `ticket` is
        refused (WireError 503)."""
        if len(self._tickets) >= room and (not self._tickets or self._tickets[-1].priority >= ticket.priority):
            raise WireError("miner is busy: the waiting line for this service is full", status=503)
        displaced = None
        if len(self._tickets) >= room:
            displaced = self._tickets.pop()
            displaced.refuse(WireError("miner is busy: a caller with more stake took this place in line", status=503))
        bisect.insort(self._tickets, ticket, key=_order)
        return displaced

    def leave(self, ticket: Ticket) -> bool:
        """Take `ticket` out of the line; False if it was not in it (it has started, or was refused)."""
        try:
            self._tickets.remove(ticket)
        except ValueError:
            return False
        return True
