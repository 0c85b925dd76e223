"""The miner's connections: uvicorn's h11 protocol with what uvicorn's configuration lacks.

`GuardedH11Protocol` reports to the `guard.ConnectionGuard` (who holds which connection, who gives way) and
keeps, per connection:

* its stage and progress (awaiting a head, reading a body, handled by the app; bytes and the last byte's time),
  which decide whether it idles when a newcomer needs its place;
* a deadline for each request head (from the connection opening or its previous answer ending);
* the header cap (h11's 16 KiB) however the head arrives: h11 enforces it only on a head still incomplete,
  so a whole 64 KB head in one send got through; here it is refused with 431, wherever the head ends (CRLF
  or bare LF, as h11 reads it). A chunked body is refused with 411: its trailers are a second head that the
  cap would not cover, and a body needs its length for its deadline.

`serve` runs the server on a listening socket that defers each connection until it carries data.

uvicorn's `limit_concurrency` is not used: it answers 503 to every request once the open connections reach
it, idle ones included. `LogThrottle` keeps what hostile traffic makes the server log to one line (no
traceback) per kind per interval. `ensure_fd_room` keeps the connection cap below the open-file limit with room
for an accept burst.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import resource
import socket
import time
from http import HTTPStatus
from typing import Optional

import h11
import uvicorn
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.addresses import address_group
from audionet.lib.miner.guard import ConnectionGuard, log
from audionet.lib.miner.limits import Progress

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
REFUSED_HEAD = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
HEAD_END = re.compile(rb"\n\r?\n")  # where h11 ends a head (h11._receivebuffer's blank line)
CHUNKED = re.compile(rb"\ntransfer-encoding[ \t]*:", re.IGNORECASE)


DEFER_ACCEPT_S = 1  # the kernel holds a connection that has sent nothing up to this long before accept() sees it


def serve(config: uvicorn.Config) -> None:
    """Run `config`'s server on a listening socket whose connections reach the server once they carry data (Linux's
    TCP_DEFER_ACCEPT, for up to DEFER_ACCEPT_S; then they are accepted anyway). Issue 45: under 1,000 fresh
    connections a second that send nothing, a validator's first connection met a budget they had filled; now they
    wait in the kernel, and its connection arrives with its head, read at once. Past the kernel's queue (the
    backlog) SYN cookies accept without waiting, and the guard's own rules are what a flood meets."""
    sock = config.bind_socket()
    if hasattr(socket, "TCP_DEFER_ACCEPT"):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, DEFER_ACCEPT_S)
    uvicorn.Server(config).run(sockets=[sock])


def guarded_config(guard: ConnectionGuard, app, host: str, port: int, **options) -> uvicorn.Config:
    """uvicorn's configuration of a server `guard` guards, with its listen backlog."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=functools.partial(GuardedH11Protocol, guard=guard),
        backlog=guard.backlog,
        timeout_keep_alive=guard.settings.head_timeout_s,  # an idle kept-alive connection is one awaiting a head
        **options,
    )


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args, guard: ConnectionGuard, **kwargs):
        super().__init__(*args, **kwargs)
        self.guard = guard
        self.head_limit = self.config.h11_max_incomplete_event_size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
        self.head_timer: Optional[asyncio.TimerHandle] = None  # armed while a request head is awaited
        self.waiting_since = 0.0
        self.address = self.group = "?"
        self.owner: Optional[str] = None  # the caller this connection counts for (ConnectionGuard)
        self.verified = False
        self.progress = Progress()

    def idles(self, now: float) -> bool:
        between = self.verified and self.progress.stage == "head" and not self.conn.trailing_data[0]
        return self.progress.idles(self.guard.settings, now, between)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.address = self.client[0] if self.client else "?"
        self.group = address_group(self.address)
        self.progress.open(self.loop.time())
        if not self.guard.arrived(self):
            transport.close()
            return
        self._watch_head()

    def connection_lost(self, exc) -> None:
        self._disarm()
        self.guard.left(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.progress.add(len(data), self.loop.time())
        super().data_received(data)

    def handle_events(self) -> None:
        if self.conn.their_state is h11.IDLE:
            refused = self._refused_head()
            if refused is not None:
                status, message = refused
                log.warning("refused request heads: %s (%d)", message, status)
                body = json.dumps({"error": message}).encode()
                head = REFUSED_HEAD % (status, HTTPStatus(status).phrase.encode(), len(body))
                self.transport.write(head + body)
                self.close()
                return
        super().handle_events()
        if self.cycle is not None:  # the app calls this once the request's signature verifies
            self.cycle.scope.setdefault("extensions", {}).setdefault(VERIFIED_EXTENSION, self._verified)
        self._watch_stage()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_stage()

    def close(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()

    def _verified(self, hotkey: str) -> bool:
        return self.guard.verified(self, hotkey)

    def _refused_head(self) -> Optional[tuple[int, str]]:
        """(status, message) for the head awaited now, if it is refused: over the cap however it arrived (431),
        or with a chunked body (411: trailers would escape the cap, and a body needs its length for its deadline).
        The head ends where h11 ends it: at a blank line, CRLF or bare LF."""
        buffered, _ = self.conn.trailing_data
        end = HEAD_END.search(buffered, 0, self.head_limit + 4)
        if end is None:
            if len(buffered) > self.head_limit:
                return 431, f"the request head is larger than {self.head_limit} bytes"
            return None
        if end.end() > self.head_limit:
            return 431, f"the request head is larger than {self.head_limit} bytes"
        if CHUNKED.search(buffered, 0, end.end()):
            return 411, "a request body needs a Content-Length (chunked bodies are refused)"
        return None

    def _watch_stage(self) -> None:
        """Track the stage and arm the head deadline while a head is awaited (h11 IDLE on their side)."""
        state = self.conn.their_state
        stage = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else "app"
        if stage != self.progress.stage:
            self.progress.begin(stage, self.loop.time())
        self._watch_head()

    def _watch_head(self) -> None:
        awaiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if awaiting and self.head_timer is None:
            self.waiting_since = self.loop.time()
            self.head_timer = self.loop.call_later(self.guard.settings.head_timeout_s, self._head_timeout)
        elif not awaiting:
            self._disarm()

    def _head_timeout(self) -> None:
        self.head_timer = None
        log.warning(
            "closed connections that sent no complete request within %g s (idle or slow clients)",
            self.guard.settings.head_timeout_s,
        )
        self.close()

    def _disarm(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None


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
