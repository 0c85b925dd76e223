"""The miner's server: uvicorn configured and started for the guarded connections (`lib/miner/connections.py`).

`guarded_config` is uvicorn's configuration with `GuardedH11Protocol` and the guard's listen backlog; `serve` runs
it on a listening socket that defers each connection until it carries data. uvicorn's `limit_concurrency` is not
used: it answers 503 to every request once the open connections reach it, idle ones included. `LogThrottle`
keeps what hostile traffic makes the server log to one line (no traceback) per kind per interval.
`ensure_fd_room` keeps the connection cap below the open-file limit with room for an accept burst.
"""

from __future__ import annotations

import functools
import logging
import resource
import socket
import time
from typing import Optional

import uvicorn

from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.connections import GuardedH11Protocol
from audionet.lib.miner.guard import ConnectionGuard, log
from audionet.lib.miner.limits import MAX_BACKLOG

# Loggers that hostile traffic can reach: uvicorn's parse errors, asyncio's accept errors, and ours.
THROTTLED_LOGGERS = ("uvicorn.error", "asyncio", log.name)
# The listen backlog is also how many connections asyncio accepts in one go before the guard sees any, and a
# burst has a few such batches accepted before the first is closed (measured: a soft limit of the cap plus two
# batches hit "Too many open files" under 8,000 connects, plus three did not). A short backlog instead drops SYNs
# in a burst (1,000 connects took 11 s with 64, 0.07 s with 1,024): it is as long as the open-file room allows.
MIN_BACKLOG = 16  # MAX_BACKLOG: lib/miner/limits.py, the guard's default too
ACCEPT_BATCHES = 4
FD_HEADROOM = 128  # file descriptors kept free for models, threads, the chain and the log
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
