"""The miner's connection guard, for clients that connect and then sign nothing.

`GuardedH11Protocol` is uvicorn's h11 protocol with two additions, because uvicorn's configuration has
neither: a deadline for each request head (from the moment the connection opens, or its previous answer
ends, to the end of the head), and a cap on open connections that closes the longest-waiting connection
without a request head to make room, and turns the new one away only when every connection is busy
with a request. (uvicorn's `limit_concurrency` would answer 503 to honest requests while idle connections
fill the count, so it is not used.) `LogThrottle` keeps what hostile traffic makes the server log to one
line per kind per interval.
"""

from __future__ import annotations

import functools
import logging
import resource
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from audionet.lib.errors import ConfigError

log = logging.getLogger("miner.connections")
# Loggers that hostile traffic can reach: uvicorn's parse errors, asyncio's accept errors, and ours.
THROTTLED_LOGGERS = ("uvicorn.error", "asyncio", log.name)
FD_HEADROOM = 128  # file descriptors kept free for models, threads, the chain and the log


class LogThrottle(logging.Filter):
    """At most one record per kind (logger and first line of the message) per `interval_s`; the next one
    that passes says how many were dropped."""

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
        dropped = self.dropped.pop(kind, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like this in the last {self.interval_s:g} s)"
        return True


def throttle_logs(interval_s: float = 60.0) -> LogThrottle:
    throttle = LogThrottle(interval_s)
    for name in THROTTLED_LOGGERS:
        logging.getLogger(name).addFilter(throttle)
    return throttle


def ensure_fd_room(max_connections: int) -> None:
    """Raise the soft open-file limit if the cap needs it; a one-line error if the hard limit is too low."""
    needed = max_connections + FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise ConfigError(
                f"--miner.max_connections {max_connections} needs {needed} open files; the limit is {hard}"
                " (raise it with ulimit -n, or lower the cap)"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def guarded_protocol(head_timeout_s: float, max_connections: int):
    """The protocol factory for `uvicorn.Config(http=...)`."""
    return functools.partial(GuardedH11Protocol, head_timeout_s=head_timeout_s, max_connections=max_connections)


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args, head_timeout_s: float, max_connections: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_timeout_s, self.max_connections = head_timeout_s, max_connections
        self.head_timer: object | None = None  # armed while a request head is awaited
        self.waiting_since = 0.0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._make_room():
            log.warning("at the cap of %d connections, all busy: turned new connections away", self.max_connections)
            transport.close()
            return
        self._watch_head()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        self._watch_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_head()

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request head; False if there is none."""
        waiting = [
            c
            for c in self.connections
            if c is not self and getattr(c, "head_timer", None) is not None and not c.transport.is_closing()
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c.waiting_since)
        log.warning("at the cap of %d connections: closed the ones waiting longest for a request", self.max_connections)
        oldest._close()
        return True

    def _watch_head(self) -> None:
        """Arm the deadline while a head is awaited (h11 IDLE on their side); disarm once it has arrived."""
        awaiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if awaiting and self.head_timer is None:
            self.waiting_since = self.loop.time()
            self.head_timer = self.loop.call_later(self.head_timeout_s, self._head_timeout)
        elif not awaiting:
            self._disarm()

    def _head_timeout(self) -> None:
        self.head_timer = None
        log.warning(
            "closed connections that sent no complete request within %g s (idle or slow clients)", self.head_timeout_s
        )
        self._close()

    def _disarm(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _close(self) -> None:
        self._disarm()
        self.timeout_keep_alive_handler()  # uvicorn's own close for an idle connection
