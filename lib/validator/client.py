"""The validator's side of the wire: sign, POST, read the reply within bounds (`reply.py`), verify the signed
response (fresh when its headers arrived), check it answers *this* request, and decode its audio, that last part
in a worker thread so that no answer holds the event loop.

A failed query never raises: it comes back as an `Answer` with `error` set (one sanitised line), whatever the
miner sent, so one bad miner cannot break a round.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Optional

import bittensor as bt
import httpx

from audionet.lib.core.audio import Audio
from audionet.lib.core.auth import REPLAY_WINDOW_S, sign_request, verify_response
from audionet.lib.core.errors import WireError, clean_line
from audionet.lib.core.protocol import (
    HEALTH_PATH,
    IDLE_CONNECTION_S,
    MAX_RESPONSE_BYTES,
    ResponseMeta,
    ServiceRequest,
    encode_request,
    parse_json,
    path_for,
    sha256_hex,
    unpack_response,
)
from audionet.lib.services import registry
from audionet.lib.validator.reply import IDENTITY, MAX_HEALTH_BYTES, Reply, error_line, read_async, read_sync

log = logging.getLogger("validator")


HEALTH_TIMEOUT_S = 5.0  # a miner that cannot say what it serves within this is asked for every service
# How a request fails when its kept-alive connection closes before any answer comes: the miner's idle close and
# this send crossed. A loaded validator can send later than its keep-alive expiry meant (CI lost an honest answer
# so, twice), so such a request goes out once more, unchanged, on another connection. Unchanged, its nonce
# guards the miner: had the first copy reached it, the second is a replay and refused, never generated twice.
CROSSED = (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)


def connection_limits(**sizes) -> httpx.Limits:
    """httpx's limits for asking miners: a kept-alive connection is given up at half of how long a miner keeps one
    (`IDLE_CONNECTION_S`; httpx's default expiry equals it), so a request seldom goes out on one the miner is
    closing (and one that does goes out again: `CROSSED`)."""
    return httpx.Limits(keepalive_expiry=IDLE_CONNECTION_S / 2, **sizes)


@dataclass(frozen=True)
class Target:
    uid: int
    hotkey: str
    endpoint: str  # "ip:port" from the metagraph


@dataclass
class Answer:
    target: Target
    service: str
    request: ServiceRequest
    latency_s: float
    audio: Optional[Audio] = None
    meta: Optional[ResponseMeta] = None
    error: Optional[str] = None
    decode_s: float = 0.0  # seconds spent checking the answer: its signature, request hash and audio

    @property
    def ok(self) -> bool:
        return self.error is None and self.audio is not None


class MinerClient:
    """`client`: one httpx client, or several that share the miners between them by endpoint (httpx's
    connection pool does work quadratic in the requests and connections it holds: 768 queries through one pool
    cost a round at 256 miners more than a minute of event loop, and every query timed out)."""

    def __init__(self, wallet, client: httpx.AsyncClient | Sequence[httpx.AsyncClient]):
        self.wallet = wallet
        self.pools = (client,) if isinstance(client, httpx.AsyncClient) else tuple(client)
        self.hotkey = wallet.hotkey.ss58_address
        self.nonces = bt.http_auth.InMemoryNonceStore()

    async def query(self, target: Target, service, request: ServiceRequest, timeout: float) -> Answer:
        """Ask `target` for `request` of `service` (a lib.services Service: its name and answer decoder)."""
        path = path_for(service.name)
        body = encode_request(request)
        headers = sign_request(self.wallet, path, body, target.hotkey) | {"Content-Type": "application/json"}
        started = time.perf_counter()
        answer = Answer(target, service.name, request, latency_s=0.0)
        try:
            reply = await self._exchange(target, path, body, headers, timeout, MAX_RESPONSE_BYTES)
            answer.latency_s = time.perf_counter() - started
            received = time.perf_counter()
            try:  # hashing, unpacking and decoding up to 8 MB: off the event loop
                answer.meta, answer.audio = await asyncio.to_thread(self._check, target, path, body, service, reply)
            finally:
                answer.decode_s = time.perf_counter() - received
        except Exception as error:  # whatever the miner sent, its query ends in its own verdict
            answer.error = failure(error, timeout, target)
        answer.latency_s = answer.latency_s or time.perf_counter() - started
        return answer

    async def served(
        self, target: Target, timeout: float = HEALTH_TIMEOUT_S, wanted: Optional[Collection[str]] = None
    ) -> Optional[frozenset[str]]:
        """The services among `wanted` (default: every registered one) that `target` serves, from its health
        signed by its hotkey for this validator (None when it does not answer, or not with a signed answer);
        nothing else of the answer is kept."""
        try:
            return await self.services(target, timeout, wanted)
        except Exception:  # any failure means the same: ask it for every service, and score what it answers
            return None

    async def services(
        self, target: Target, timeout: float, wanted: Optional[Collection[str]] = None
    ) -> frozenset[str]:
        """`served`, raising what went wrong (`failure` makes it a line) where `served` says None."""
        headers = sign_request(self.wallet, HEALTH_PATH, b"", target.hotkey, method="GET")
        reply = await self._exchange(target, HEALTH_PATH, b"", headers, timeout, MAX_HEALTH_BYTES, method="GET")
        return await asyncio.to_thread(self._services_in, target, reply, wanted)

    def _check(self, target: Target, path: str, body: bytes, service, reply: Reply) -> tuple[ResponseMeta, Audio]:
        """The answer's signature (fresh when its headers arrived), that it answers this request, and its audio."""
        self._verify(target, path, reply)
        meta, flac = unpack_response(reply.body)
        if meta.request_sha256 != sha256_hex(body) or meta.service != service.name:
            raise WireError("response answers a different request")
        return meta, service.decode_answer(flac)

    def _services_in(self, target: Target, reply: Reply, wanted: Optional[Collection[str]]) -> frozenset[str]:
        self._verify(target, HEALTH_PATH, reply)
        details = parse_json(reply.body, MAX_HEALTH_BYTES, "the health answer")
        services = details.get("services") if isinstance(details, dict) else None
        if not isinstance(services, (dict, list)):
            raise WireError("the health answer lists no services")
        known = set(registry.names() if wanted is None else wanted)
        return frozenset(name for name in services if isinstance(name, str) and name in known)

    def _verify(self, target: Target, path: str, reply: Reply) -> None:
        verify_response(
            reply.headers,
            reply.body,
            path,
            miner_hotkey=target.hotkey,
            self_hotkey=self.hotkey,
            nonce_store=self.nonces,
            received_ns=reply.headers_at_ns,
        )

    async def _exchange(
        self, target: Target, path: str, body: bytes, headers: dict, timeout: float, cap: int, method: str = "POST"
    ) -> Reply:
        """`target`'s reply at `path` (at most `cap` bytes), once its status is 200; a WireError otherwise.
        wait_for bounds the whole exchange (httpx's timeout is per read), whatever the miner sends."""
        # A nonce is checked once the body is in, up to `timeout` after the headers it is judged fresh at: it is
        # remembered that much longer than the freshness window, or a replay inside the gap would pass.
        self.nonces.retention = max(self.nonces.retention, REPLAY_WINDOW_S + timeout)
        reply = await asyncio.wait_for(
            self._fetch(f"http://{target.endpoint}{path}", body, headers, timeout, cap, method), timeout
        )
        if reply.status != 200:
            raise WireError(error_line(reply.status, reply.body))
        return reply

    async def _fetch(self, url: str, body: bytes, headers: dict, timeout: float, cap: int, method: str) -> Reply:
        http = self.pools[zlib.crc32(url.split("/")[2].encode()) % len(self.pools)]  # by the miner's endpoint
        request = http.build_request(method, url, content=body, headers=headers | IDENTITY, timeout=timeout)
        try:
            response = await http.send(request, stream=True)
        except CROSSED:
            response = await http.send(request, stream=True)
        try:
            return await read_async(response.status_code, response.headers, response.aiter_raw(), cap)
        finally:
            await response.aclose()


def failure(error: Exception, timeout: float, target: Target) -> str:
    """The one line an exception of a query becomes (the miner's verdict): a WireError says what was wrong,
    other errors their kind; one this module did not expect is also logged (sanitised), being likely a bug."""
    if isinstance(error, WireError):
        return error.message
    if isinstance(error, (TimeoutError, httpx.TimeoutException)):
        return f"timed out after {timeout:g} s"
    if isinstance(error, httpx.HTTPError):
        return clean_line(f"{type(error).__name__}: {error}", 200)
    line = clean_line(f"{type(error).__name__} while reading the answer: {error}", 200)
    log.warning("uid %d: %s", target.uid, line)
    return line


def miner_health(base_url: str, wallet, miner_hotkey: str, timeout: float = 5.0) -> dict:
    """The details of a miner's /v1/health (the services it serves, queues, models, devices): a GET signed by
    `wallet`, which must be the miner's own hotkey or one its access policy admits (the answer is signed back
    to it). Unsigned, /v1/health only says it is alive. Read within the bounds of every miner reply."""
    headers = sign_request(wallet, HEALTH_PATH, b"", miner_hotkey, method="GET") | IDENTITY
    with httpx.stream("GET", base_url + HEALTH_PATH, headers=headers, timeout=timeout) as response:
        reply = read_sync(response.status_code, response.headers, response.iter_raw(), MAX_HEALTH_BYTES)
    if reply.status != 200:
        raise WireError(error_line(reply.status, reply.body), status=reply.status)
    details = parse_json(reply.body, MAX_HEALTH_BYTES, "the health answer")
    if not isinstance(details, dict):
        raise WireError("the health answer is not a JSON object")
    return details
