"""A miner's HTTP reply, read within bounds before anything looks at it.

* No content coding: every request asks for `Accept-Encoding: identity`, and a reply that names any other
  `Content-Encoding` is refused before a byte of its body is read. (The other way, inflating as the body
  arrives with the cap counted on inflated bytes, still spends CPU per reply and per miner for nothing: answers
  are FLAC, already compressed, and the miner's JSON is a few hundred bytes.) The body is read raw, so httpx
  never inflates it: a 1.8 KB `gzip, gzip` reply that httpx unpacked to gigabytes is a one-line refusal.
* Sizes: a 200 at most MAX_RESPONSE_BYTES (a larger `Content-Length` is refused before reading), an error
  body at most MAX_ERROR_BYTES (the rest is not read: a person sees 200 characters of it), a health answer
  at most MAX_HEALTH_BYTES.
* When its headers arrived (`headers_at_ns`): an answer is judged fresh at its first byte, not its last, so a
  signed answer on a slow link that arrives within the service's timeout is not refused as stale.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass

from audionet.lib.core.errors import WireError, clean_line
from audionet.lib.core.protocol import parse_json

MAX_ERROR_BYTES = 4_096  # of an error body (its "error" line is cut to ERROR_CHARS)
MAX_HEALTH_BYTES = 262_144  # a signed /v1/health answer: per caller its places (512 connections at most) and more
ERROR_CHARS = 200
IDENTITY = {"Accept-Encoding": "identity"}  # on every request to a miner


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes
    headers_at_ns: int  # wall-clock time (ns) its headers arrived: the moment its freshness is judged at


def refuse_coding(status: int, headers: Mapping[str, str]) -> None:
    """WireError unless the body comes as it is (no `Content-Encoding`, or `identity`)."""
    coding = headers.get("content-encoding", "").strip().lower()
    if coding not in ("", "identity"):
        raise WireError(
            f"HTTP {status} with Content-Encoding {clean_line(coding, 40)!r}: only identity is accepted (the request"
            " asked for it)"
        )


def body_cap(status: int, headers: Mapping[str, str], cap: int) -> int:
    """How much of the body to read: `cap` for a 200 (WireError when its declared length is more), else at most
    MAX_ERROR_BYTES."""
    if status != 200:
        return min(cap, MAX_ERROR_BYTES)
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise WireError(f"response is {declared} bytes; the limit is {cap}")
    return cap


class Body:
    """The raw bytes of one reply, up to its cap: past it a 200 is refused, an error body is cut."""

    def __init__(self, status: int, headers: Mapping[str, str], cap: int):
        refuse_coding(status, headers)
        self.status, self.headers, self.headers_at_ns = status, headers, time.time_ns()
        self.cap, self.chunks, self.size = body_cap(status, headers, cap), [], 0

    def add(self, chunk: bytes) -> bool:
        """Keep `chunk`; False once an error body has reached its cap (stop reading: the rest is not needed)."""
        room = self.cap - self.size
        if len(chunk) > room and self.status == 200:
            raise WireError(f"response exceeds {self.cap} bytes")
        self.chunks.append(chunk[:room])
        self.size += min(len(chunk), room)
        return self.status == 200 or self.size < self.cap  # a 200 is read to its end: a byte past the cap refuses it

    def reply(self) -> Reply:
        return Reply(self.status, self.headers, b"".join(self.chunks), self.headers_at_ns)


async def read_async(status: int, headers: Mapping[str, str], raw: AsyncIterator[bytes], cap: int) -> Reply:
    body = Body(status, headers, cap)
    async for chunk in raw:
        if not body.add(chunk):
            break
    return body.reply()


def read_sync(status: int, headers: Mapping[str, str], raw: Iterator[bytes], cap: int) -> Reply:
    body = Body(status, headers, cap)
    for chunk in raw:
        if not body.add(chunk):
            break
    return body.reply()


def error_line(status: int, content: bytes) -> str:
    """'HTTP 503' and, when the body is the miner's one-line JSON error, at most ERROR_CHARS of it, quoted and
    sanitised."""
    try:
        detail = parse_json(content, MAX_ERROR_BYTES, "the error body")
        detail = clean_line(detail.get("error", "") if isinstance(detail, dict) else "", ERROR_CHARS)
    except WireError:
        detail = ""
    return f"HTTP {status}" + (f': "{detail}"' if detail else "")
