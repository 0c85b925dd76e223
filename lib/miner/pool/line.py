"""The waiting line of one service and what it admits (issue 45): a request's place in it, and what the scheduler
knows about a request before it runs.

**The line**, in stake order: highest stake first, first come first served among equals. **Places follow stake**
(`lib.miner.limits`): one caller holds at most its share of the line's places (parsing, waiting and generating), at
least one; past it, its next request gets a 503 at once.

A request takes its place as soon as its caller is verified, before its body is parsed (its text measured):
a *ticket* with no request yet. Parsing and waiting tickets share the line. When the line is full, a caller
with more stake than the last in line takes that place, whatever that one's stage, and the displaced one gets
a 503 at once (a parse still running is dropped); a caller with no more stake than the last in line is refused
itself. A ticket whose caller leaves (the miner cancels its task when the client disconnects) is taken out at
once, so its place is free for the next caller.

**Estimates** (`answer_length`, `check_in_time`): how long its answer will be, by the backend's own reckoning,
and whether it can finish in time.

* **Length.** The length check of `Service.parse` reads text as espeak-ng reads it at its fastest rate, for any
  backend; a backend that speaks differently (Kokoro reads CJK, symbols and Roman numerals up to 1.85x as long;
  espeak-ng's own voices and seeds speak more slowly than its fastest rate) says at least how long its own
  answer would be (`Service.answer_seconds`: Kokoro from its phonemes and voice, espeak-ng from the voice and
  the seed's rate). Text it would speak past the answer limit is refused at once (400, given back), not
  after a generation that the audio budget stops.
* **In time.** A long request (a third of the service's longest answer or more) that even the fastest replica
  would not finish within *half* the timeout at its measured speed is refused before it starts (503, given
  back): a long generation holds its slot at most about half the timeout, so a request with more stake that
  waits behind it is still answered within its own timeout. Shorter requests always run, so the speed stays
  measured.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.core.stop import Stop
from audionet.lib.miner.limits import LINE_FLOOR, Caller, entitled, percent
from audionet.lib.miner.pool.replica import Replica

LONG_SHARE = 1 / 3  # of the service's longest answer: a request this long or longer is checked before it starts
IN_TIME_SHARE = 0.5  # of the timeout: the most a long generation may be expected to take


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
    """The tickets in line order, those generating, and the places each caller holds until released."""

    def __init__(self) -> None:
        self._tickets: list[Ticket] = []  # in line order
        self.generating: dict[int, Ticket] = {}  # abandoned ones included until their backend returns
        self.holding: Counter[str] = Counter()  # places (parsing, waiting, generating) per caller
        self._ids = itertools.count()

    def enter(self, caller: Caller, places: int, room: int, service: str) -> Ticket:
        """A new ticket for `caller` in its place, or WireError 503 at once: when `caller` already holds its share
        of the `places` (the slots and the waiting places), or when the line is full (`room`: how many may be in
        line now) and it has no more stake than the last in line (else that one is displaced, whatever its
        stage, and its place released)."""
        limit = entitled(caller.share, places, LINE_FLOOR)
        if limit < places and self.holding[caller.hotkey] >= limit:  # entitled to all: stake decides alone
            raise WireError(
                f"this caller holds {limit} of the {places} places of the {service} line, its share"
                f" ({percent(caller.share)} of the stake): wait for an answer",
                status=503,
            )
        ticket = Ticket(next(self._ids), caller, asyncio.get_running_loop().create_future())
        displaced = self.join(ticket, room)
        self.holding[caller.hotkey] += 1
        if displaced is not None:
            self.release(displaced)
        return ticket

    def start(self, ticket: Ticket) -> None:
        """`ticket` leaves the line for a slot; it holds its place until released."""
        self.leave(ticket)
        self.generating[ticket.id] = ticket

    def release(self, ticket: Ticket) -> None:
        """`ticket`'s place no longer counts against its caller (once, whenever its request is done with)."""
        self.generating.pop(ticket.id, None)
        if not ticket.released:
            ticket.released = True
            self.holding[ticket.caller.hotkey] -= 1
            if self.holding[ticket.caller.hotkey] <= 0:
                del self.holding[ticket.caller.hotkey]

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

    def held(self) -> dict[str, dict[str, int]]:
        """Per caller, the places it holds by stage (parsing, waiting, generating)."""
        out: dict[str, dict[str, int]] = {}
        for ticket in [*self._tickets, *self.generating.values()]:
            stages = out.setdefault(ticket.caller.hotkey, {"parsing": 0, "waiting": 0, "generating": 0})
            stages[ticket.stage] += 1
        return out

    def leave(self, ticket: Ticket) -> bool:
        """Take `ticket` out of the line; False if it was not in it (it has started, or was refused)."""
        try:
            self._tickets.remove(ticket)
        except ValueError:
            return False
        return True


def answer_length(service, replicas: Sequence, request: ServiceRequest) -> Optional[float]:
    """At least how long the answer to `request` lasts, by the first replica's backend, when the espeak-ng
    reading says it is long (a short text cannot reach the limit in any voice); WireError 400 past the answer
    limit. Runs in a worker thread (espeak-ng counts about 2 ms per second of speech, Kokoro phonemises)."""
    if service.planned_seconds(request) < LONG_SHARE * service.max_seconds:
        return None
    seconds = replicas[0].answer_seconds(request)
    if seconds is not None and seconds > service.answer_limit_s:
        raise WireError(
            f"this miner's {service.name} backend speaks the text for more than {seconds:.1f} s in the voice and"
            f" seed asked; the answer may be at most {service.answer_limit_s:g} s"
        )
    return seconds


def check_in_time(service, replicas: Sequence, size: float, timeout_s: float) -> None:
    """WireError 503 when a long request of `size` audio seconds would take even the fastest replica more than
    half the timeout at its measured speed."""
    fastest = min((r.speed.value for r in replicas if r.speed.value is not None), default=None)
    if size < LONG_SHARE * service.max_seconds or fastest is None:
        return
    budget = IN_TIME_SHARE * timeout_s
    if size * fastest > budget:
        raise WireError(
            f"{service.name}: about {size:.0f} s of audio would take this miner {size * fastest:.0f} s at its"
            f" measured speed, more than {budget:g} s (half its {timeout_s:g} s timeout, so that a request behind"
            " it is answered in time)",
            status=503,
        )
