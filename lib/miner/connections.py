"""The miner's connection guard, for clients that connect and then prove nothing.

A connection is *unverified* from the moment it opens until a request on it carries a signature that
verifies (the miner calls the `audionet.verified` scope extension then); a claimed hotkey alone earns
nothing. `GuardedH11Protocol` is uvicorn's h11 protocol with what uvicorn's configuration lacks:

* a budget for unverified connections apart from the verified callers' places: at most `max_unverified`
  are open; at the budget a newcomer from an address already among the busiest is turned away (cheap: no
  head is read), and one from a lighter address (an honest validator's, a moment before its signature
  checks out) takes the place of the busiest address's oldest, so a flood from some addresses costs the
  others nothing;
* a per-address cap: at most `max_per_address` unverified connections from one address (its newest are
  turned away);
* a cap on all open connections: past it the verified connection idle longest is closed, then the oldest
  unverified one; a new connection is turned away only when every other one is busy with a verified
  request (uvicorn's `limit_concurrency` would answer 503 to honest requests while idle connections fill
  the count, so it is not used);
* a deadline for each request head (from the connection opening or its previous answer ending);
* the header cap (h11's 16 KiB) however the head arrives: h11 enforces it only on a head still incomplete,
  so a whole 64 KB head in one send got through; here it is refused with 431.

`Pacer` keeps a request kind (the miner's /v1/health) to a rate: over it, callers wait their turn.
`LogThrottle` keeps what hostile traffic makes the server log to one line (no traceback) per kind per
interval. `ensure_fd_room` keeps the connection cap below the open-file limit with room for an accept burst.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import resource
import time
from typing import Optional

import h11
import uvicorn
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from audionet.lib.core.errors import ConfigError

log = logging.getLogger("miner.connections")
# Loggers that hostile traffic can reach: uvicorn's parse errors, asyncio's accept errors, and ours.
THROTTLED_LOGGERS = ("uvicorn.error", "asyncio", log.name)
# The listen backlog is also how many connections asyncio accepts in one go before the guard sees any, and a
# burst has a few such batches accepted before the first is closed (measured: a soft limit of the cap plus two
# batches hit "Too many open files" under 8,000 connects, plus three did not). A short backlog instead drops SYNs
# in a burst (1,000 connects took 11 s with 64, 0.07 s with 1,024): it is as long as the open-file room allows.
MAX_BACKLOG, MIN_BACKLOG = 1024, 16
ACCEPT_BATCHES = 4
FD_HEADROOM = 128  # file descriptors kept free for models, threads, the chain and the log
VERIFIED_EXTENSION = "audionet.verified"  # scope["extensions"][...]: call it once the request's signature verifies
HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\nconnection: close\r\n"
)


class ConnectionGuard:
    """The limits, and who has proven nothing yet, shared by the connections of one server."""

    def __init__(
        self,
        head_timeout_s: float,
        max_connections: int,
        max_unverified: Optional[int] = None,
        max_per_address: int = 64,
        backlog: int = MAX_BACKLOG,
    ):
        """`backlog`: the listen backlog, from `ensure_fd_room`."""
        self.head_timeout_s, self.max_connections, self.backlog = head_timeout_s, max_connections, backlog
        self.max_unverified = max_connections // 2 if max_unverified is None else max_unverified
        self.max_per_address = max_per_address
        if not 1 <= self.max_unverified <= max_connections or max_per_address < 1:
            raise ConfigError(
                f"--miner.max_unverified {self.max_unverified} must be 1 to --miner.max_connections {max_connections},"
                f" and --miner.max_unverified_per_ip at least 1"
            )
        self.live: set[GuardedH11Protocol] = set()  # open and not being closed by the guard
        self.unverified: dict[GuardedH11Protocol, None] = {}  # oldest first
        self.by_address: dict[str, dict[GuardedH11Protocol, None]] = {}

    def config(self, app, host: str, port: int, **options) -> uvicorn.Config:
        """uvicorn's configuration of a server these limits guard, with their listen backlog."""
        return uvicorn.Config(
            app,
            host=host,
            port=port,
            http=functools.partial(GuardedH11Protocol, guard=self),
            backlog=self.backlog,
            timeout_keep_alive=self.head_timeout_s,  # an idle kept-alive connection is one awaiting a head
            **options,
        )

    def arrived(self, conn: GuardedH11Protocol) -> bool:
        """Count a new connection and make room for it; False: turn it away. Turning a newcomer away costs an
        accept and a close; closing an older connection to make room costs that one's head and request too, so
        it is done only for a newcomer from an address lighter than the busiest (an honest validator's, say)."""
        same = self.by_address.get(conn.address, {})
        if len(same) >= self.max_per_address:
            log.warning("%s holds %d unverified connections: turned its newest away", conn.address, len(same))
            return False
        if len(self.unverified) >= self.max_unverified:
            busiest = max(self.by_address.values(), key=len)
            if same and len(same) + 1 >= len(busiest):  # its own address is among the busiest: the newcomer goes
                log.warning("at the budget of %d unverified connections: turned a newcomer away", self.max_unverified)
                return False
            self._close(
                next(iter(busiest)), "at the budget of %d unverified connections: closed one", self.max_unverified
            )
        self.live.add(conn)
        self.unverified[conn] = None
        self.by_address.setdefault(conn.address, {})[conn] = None
        if len(self.live) <= self.max_connections:
            return True
        idle = [c for c in self.live if c not in self.unverified and c.head_timer is not None]
        victim = min(idle, key=lambda c: c.waiting_since, default=None) or next(
            (c for c in self.unverified if c is not conn), None
        )
        if victim is None:
            self.left(conn)
            log.warning(
                "at the cap of %d connections, all busy with verified requests: turned new connections away",
                self.max_connections,
            )
            return False
        self._close(victim, "at the cap of %d connections: closed the idle or unverified one", self.max_connections)
        return True

    def verified(self, conn: GuardedH11Protocol) -> None:
        """A request on `conn` carried a signature that verifies: it leaves the unverified budget."""
        if conn in self.unverified:
            del self.unverified[conn]
            same = self.by_address[conn.address]
            del same[conn]
            if not same:
                del self.by_address[conn.address]

    def left(self, conn: GuardedH11Protocol) -> None:
        """`conn` is closing or gone: it no longer counts (uvicorn's own set keeps it until it is lost)."""
        self.live.discard(conn)
        self.verified(conn)  # out of the unverified budget too

    def _close(self, victim: GuardedH11Protocol, message: str, *args) -> None:
        log.warning(message, *args)
        self.left(victim)
        victim.close()


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args, guard: ConnectionGuard, **kwargs):
        super().__init__(*args, **kwargs)
        self.guard = guard
        self.head_limit = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        self.head_timer: Optional[asyncio.TimerHandle] = None  # armed while a request head is awaited
        self.waiting_since = 0.0
        self.address = "?"

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.address = self.client[0] if self.client else "?"
        if not self.guard.arrived(self):
            transport.close()
            return
        self._watch_head()

    def connection_lost(self, exc) -> None:
        self._disarm()
        self.guard.left(self)
        super().connection_lost(exc)

    def handle_events(self) -> None:
        if self.conn.their_state is h11.IDLE and self._head_too_large():
            log.warning("refused request heads over %d bytes (431)", self.head_limit)
            body = b'{"error": "the request head is larger than %d bytes"}' % self.head_limit
            self.transport.write(HEAD_TOO_LARGE + b"content-length: %d\r\n\r\n" % len(body) + body)
            self.close()
            return
        super().handle_events()
        if self.cycle is not None:  # the app calls this once the request's signature verifies
            self.cycle.scope.setdefault("extensions", {}).setdefault(VERIFIED_EXTENSION, self._verified)
        self._watch_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_head()

    def close(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()

    def _verified(self) -> None:
        self.guard.verified(self)

    def _head_too_large(self) -> bool:
        """The head awaited now (what h11 holds until its blank line) is over the cap, however it arrived."""
        buffered, _ = self.conn.trailing_data
        end = buffered.find(b"\r\n\r\n", 0, self.head_limit + 4)
        return len(buffered) > self.head_limit if end < 0 else end + 4 > self.head_limit

    def _watch_head(self) -> None:
        """Arm the deadline while a head is awaited (h11 IDLE on their side); disarm once it has arrived."""
        awaiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if awaiting and self.head_timer is None:
            self.waiting_since = self.loop.time()
            self.head_timer = self.loop.call_later(self.guard.head_timeout_s, self._head_timeout)
        elif not awaiting:
            self._disarm()

    def _head_timeout(self) -> None:
        self.head_timer = None
        log.warning(
            "closed connections that sent no complete request within %g s (idle or slow clients)",
            self.guard.head_timeout_s,
        )
        self.close()

    def _disarm(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None


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


class LogThrottle(logging.Filter):
    """At most one record per kind (logger and first line of the message) per `interval_s`; the next one
    that passes says how many were dropped. An OSError a client can cause (asyncio's "Too many open files"
    on accept, a reset) is one line, not a traceback; other exceptions keep theirs, since they are bugs."""

    MAX_KINDS = 1024

    def __init__(self, interval_s: float = 60.0, clock=time.monotonic):
        super().__init__()
        self.interval_s, self.clock = interval_s, clock
        self.last: dict[tuple, float] = {}
        self.dropped: dict[tuple, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        kind = (record.name, str(record.msg).split("\n", 1)[0][:120])
        now = self.clock()
        if kind in self.last and now - self.last[kind] < self.interval_s:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
            return False
        if len(self.last) >= self.MAX_KINDS:
            self.last.clear()
        self.last[kind] = now
        error = record.exc_info[1] if record.exc_info else None
        first = _client_caused(record, error)
        if first is not None:
            record.msg, record.args = f"{first}: {type(error).__name__}: {error}", None
            record.exc_info = record.exc_text = None
        dropped = self.dropped.pop(kind, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like this in the last {self.interval_s:g} s)"
        return True


def _client_caused(record: logging.LogRecord, error: Optional[BaseException]) -> Optional[str]:
    """The line for an error a client can cause, or None for a bug (it keeps its traceback). An OSError keeps
    its message's first line; asyncio's accept retry, scheduled when it ran out of open files, firing after the
    server closed (its socket gone, fd -1) gets a line that says so."""
    if isinstance(error, OSError):
        return record.getMessage().split("\n", 1)[0]
    if isinstance(error, ValueError) and "_start_serving" in str(record.msg):
        return "accepting again after running out of open files, but the server had closed"
    return None


def throttle_logs(interval_s: float = 60.0) -> LogThrottle:
    throttle = LogThrottle(interval_s)
    for name in THROTTLED_LOGGERS:
        logging.getLogger(name).addFilter(throttle)
    return throttle


def fd_needed(max_connections: int, backlog: int) -> int:
    """Open files the cap needs: the connections, a few accept batches beyond them, and the rest of the miner."""
    return max_connections + ACCEPT_BATCHES * backlog + FD_HEADROOM


def ensure_fd_room(max_connections: int) -> int:
    """The listen backlog the hard open-file limit leaves room for (up to MAX_BACKLOG), with the soft limit raised
    to fit it; a one-line error if the hard limit cannot hold the cap and even a short backlog."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = (1 << 30 if hard == resource.RLIM_INFINITY else hard) - max_connections - FD_HEADROOM
    backlog = min(MAX_BACKLOG, room // ACCEPT_BATCHES)
    if backlog < MIN_BACKLOG:
        raise ConfigError(
            f"--miner.max_connections {max_connections} needs {fd_needed(max_connections, MIN_BACKLOG)} open files;"
            f" the limit is {hard} (raise it with ulimit -n, or lower the cap)"
        )
    needed = fd_needed(max_connections, backlog)
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return backlog
