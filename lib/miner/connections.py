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

The server around it (uvicorn's configuration, the listening socket, the log throttle, open files) is
`lib/miner/server.py`.
"""

from __future__ import annotations

import asyncio
import json
import re
from http import HTTPStatus
from typing import Optional

import h11
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
from uvicorn.protocols.http.h11_impl import H11Protocol

from audionet.lib.miner.addresses import address_group
from audionet.lib.miner.guard import ConnectionGuard, log
from audionet.lib.miner.limits import Progress

VERIFIED_EXTENSION = "audionet.verified"  # scope["extensions"][...]: call it once the request's signature verifies
REFUSED_HEAD = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
HEAD_END = re.compile(rb"\n\r?\n")  # where h11 ends a head (h11._receivebuffer's blank line)
CHUNKED = re.compile(rb"\ntransfer-encoding[ \t]*:", re.IGNORECASE)


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
