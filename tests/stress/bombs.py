"""Answers a hostile miner sends a validator (issue 45), each one a behaviour of `badminers.BadMiner`:

* `gzip_bomb`: a 200 answer with `Content-Encoding: gzip, gzip`, a few KB on the wire that inflate to
  `BOMB_BYTES` (issue 45: 1.8 KB that httpx unpacked to gigabytes, and the validator was killed for memory);
* `compressed`: a plain `gzip` answer, 64 KB on the wire and 64 MB inflated (100 of them froze the event loop
  for 18 s: honest answers went stale);
* `deep_error`, `deep_health`, `deep_header`: `"[" * 5000` as an error body (no key needed), as a signed health
  answer, and as a signed answer's header (json.loads raised RecursionError and every round failed);
* `fat_health`: a signed health answer listing 250 KB of services, the most a validator reads (issue 45: 7.2 MB
  lists were kept for 600 s, 51 MB per miner; a longer one is not read at all);
* `log_injection`: error bodies with escape sequences and a forged "set weights" line, and a signed answer
  whose model and device hold control characters;
* `slow_link`: an honest signed answer of `SLOW_ANSWER_BYTES` sent at `SLOW_LINK_RATE` bytes a second: it
  arrives within the timeout but takes longer than the 10 s freshness window (refused as stale before).

A kind that attacks one kind of request answers the other one honestly (a signed health listing the service
asked, or a well-formed signed answer), so each attack is met where it aims.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib

import numpy as np

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.core.auth import sign_response
from audionet.lib.core.protocol import HEALTH_PATH, RESPONSE_CONTENT_TYPE

KINDS = (
    "plain",  # no attack: a signed health answer and well-formed signed answers, at once (a control)
    "gzip_bomb",
    "compressed",
    "deep_error",
    "deep_health",
    "deep_header",
    "fat_health",
    "log_injection",
    "slow_link",
)
BOMBS = ("gzip_bomb", "deep_error", "deep_health", "deep_header")  # the bombs, cycled in its scenario
BOMB_BYTES = 1 << 30  # what a bomb inflates to (1 GiB: more than half a validator's baseline)
COMPRESSED_BYTES = 64 << 20
DEEP = b"[" * 5000
FAT_SERVICES = 250_000  # bytes of service names in a fat health answer: the most a validator reads (256 KiB)
FORGED = "\x1b[2K\r\n2026-01-01 00:00:00 INFO validator: set weights at block 99: mechanism 0 (tts): 1 uids\x1b[8m"
SLOW_LINK_RATE = 50_000  # bytes a second
SLOW_ANSWER_BYTES = 800_000  # 16 s at 50 KB/s: inside TTS's 20 s timeout, past the 10 s freshness window


FAT_LIST = [f"service-{n:07d}" for n in range(FAT_SERVICES // 22)] + ["tts", "vc", "music"]


def head(status: str, length: int, headers: dict, content_type: str = RESPONSE_CONTENT_TYPE, close=True) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", f"Content-Length: {length}"]
    lines += [f"{key}: {value}" for key, value in headers.items()] + ["Connection: close"] * close + ["", ""]
    return "\r\n".join(lines).encode()


def gzipped(size: int, layers: int) -> bytes:
    """`size` zero bytes gzipped `layers` times over, compressed a megabyte at a time (never held whole)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    block = bytes(1 << 20)
    data = b"".join(packer.compress(block[: min(len(block), size - at)]) for at in range(0, size, len(block)))
    data += packer.flush()
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


_PACKED: dict[tuple[int, int], bytes] = {}


def packed(size: int, layers: int) -> bytes:
    if (size, layers) not in _PACKED:
        _PACKED[(size, layers)] = gzipped(size, layers)
    return _PACKED[(size, layers)]


def prepare(kind: str) -> None:
    """Compress what a kind sends ahead of time (a GiB takes seconds), not while a validator waits."""
    if kind == "gzip_bomb":
        packed(BOMB_BYTES, 2)
    elif kind == "compressed":
        packed(COMPRESSED_BYTES, 1)


def noise_flac(size: int) -> bytes:
    """A FLAC of white noise of about `size` bytes (noise does not compress: 2 bytes a sample at 24 kHz)."""
    rng = np.random.default_rng(size)
    return encode_flac(Audio(rng.uniform(-0.3, 0.3, size // 2).astype(np.float32), 24_000))


def signed(miner, path: str, payload: bytes, headers: dict | None = None, content_type=RESPONSE_CONTENT_TYPE):
    """The head of a 200 carrying `payload`, signed by `miner` for its validator."""
    signature = sign_response(miner.wallet, path, payload, miner.validator_hotkey)
    return head("200 OK", len(payload), signature | (headers or {}), content_type)


def health(miner, services: object) -> bytes:
    payload = json.dumps({"status": "ok", "services": services}).encode()
    return signed(miner, HEALTH_PATH, payload, content_type="application/json") + payload


def error(body: bytes, status: str = "500 Internal Server Error") -> bytes:
    return head(status, len(body), {}, "application/json") + body


def bad_meta(miner, path: str, body: bytes) -> bytes:
    """A signed answer whose model and device hold control characters (a forged log line among them)."""
    payload, _ = miner.answer(path, body)
    header_len = int.from_bytes(payload[4:8], "big")
    meta = json.loads(payload[8 : 8 + header_len]) | {"model": FORGED[:120], "device": "cpu\x1b[31m\x07"}
    answer = pack_raw(json.dumps(meta).encode(), payload[8 + header_len :])
    return signed(miner, path, answer) + answer


def pack_raw(header: bytes, flac: bytes) -> bytes:
    return b"ANR1" + len(header).to_bytes(4, "big") + header + flac


def reply(miner, path: str, body: bytes) -> bytes | None:
    """What `miner` sends back at once (None: a slow link's answer, sent by `send`)."""
    kind = miner.behaviour
    asking_health = path == HEALTH_PATH
    if kind == "gzip_bomb":
        bomb = packed(BOMB_BYTES, 2)
        return head("200 OK", len(bomb), {"Content-Encoding": "gzip, gzip"}) + bomb
    if kind == "compressed" and not asking_health:
        _answer, headers = miner.answer(path, body)  # signed over the plain answer; 64 MB of gzip sent instead
        squeezed = packed(COMPRESSED_BYTES, 1)
        return head("200 OK", len(squeezed), headers | {"Content-Encoding": "gzip"}) + squeezed
    if kind == "deep_error":
        return error(DEEP)
    if kind == "deep_health" and asking_health:
        return signed(miner, path, DEEP, content_type="application/json") + DEEP
    if kind == "deep_header" and not asking_health:
        answer = pack_raw(DEEP, b"fLaC")
        return signed(miner, path, answer) + answer
    if kind == "fat_health" and asking_health:
        return health(miner, FAT_LIST)
    if kind == "log_injection":
        if asking_health or json.loads(body).get("seed", 0) % 2:
            return error(json.dumps({"error": FORGED}).encode())
        return bad_meta(miner, path, body)
    if asking_health:
        return health(miner, {service: {} for service in ("tts", "vc", "music")})
    if kind == "slow_link":
        return None
    payload, headers = miner.answer(path, body)  # a well-formed signed answer, at once
    return head("200 OK", len(payload), headers) + payload


async def drip(writer: asyncio.StreamWriter, data: bytes, rate: float) -> None:
    """`data` at `rate` bytes a second, a tenth of a second's worth at a time."""
    step = max(1, int(rate / 10))
    for start in range(0, len(data), step):
        writer.write(data[start : start + step])
        await writer.drain()
        await asyncio.sleep(0.1)


async def send(miner, writer: asyncio.StreamWriter, path: str, body: bytes) -> None:
    """`miner`'s behaviour (one of KINDS) in answer to `body` at `path`."""
    data = reply(miner, path, body)
    if data is not None:
        writer.write(data)
        await writer.drain()
        return
    payload, headers = miner.answer(path, body, flac=noise_flac(SLOW_ANSWER_BYTES))  # slow_link
    writer.write(head("200 OK", len(payload), headers))  # its first byte now: fresh when it starts to arrive
    await drip(writer, payload, SLOW_LINK_RATE)
