"""The validator's side of the wire: sign, POST, verify the signed response,
check it answers *this* request, and decode its audio.

A failed query never raises: it comes back as an `Answer` with `error` set,
so one bad miner cannot break a round.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Optional

import bittensor as bt
import httpx

from audionet.lib.core.audio import Audio
from audionet.lib.core.auth import sign_request, verify_response
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import (
    HEALTH_PATH,
    MAX_RESPONSE_BYTES,
    ResponseMeta,
    ServiceRequest,
    encode_request,
    path_for,
    sha256_hex,
    unpack_response,
)


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

    @property
    def ok(self) -> bool:
        return self.error is None and self.audio is not None


def _error_line(status: int, content: bytes) -> str:
    try:
        detail = str(json.loads(content).get("error", ""))[:200]
    except (ValueError, AttributeError):
        detail = ""
    return f"HTTP {status}" + (f": {detail}" if detail else "")


class MinerClient:
    def __init__(self, wallet, client: httpx.AsyncClient):
        self.wallet, self.http = wallet, client
        self.hotkey = wallet.hotkey.ss58_address
        self.nonces = bt.http_auth.InMemoryNonceStore()

    async def query(self, target: Target, service, request: ServiceRequest, timeout: float) -> Answer:
        """Ask `target` for `request` of `service` (a lib.services Service: its name and answer decoder)."""
        path = path_for(service.name)
        body = encode_request(request)
        headers = sign_request(self.wallet, path, body, target.hotkey)
        headers["Content-Type"] = "application/json"
        started = time.perf_counter()
        answer = Answer(target, service.name, request, latency_s=0.0)
        try:
            payload = await self._exchange(target, path, body, headers, timeout)
            answer.latency_s = time.perf_counter() - started
            meta, flac = unpack_response(payload)
            if meta.request_sha256 != sha256_hex(body) or meta.service != service.name:
                raise WireError("response answers a different request")
            answer.meta, answer.audio = meta, service.decode_answer(flac)
        except WireError as error:
            answer.error = error.message
        except (TimeoutError, httpx.TimeoutException):
            answer.error = f"timed out after {timeout:g} s"
        except httpx.HTTPError as error:
            answer.error = f"{type(error).__name__}: {error}"[:200]
        answer.latency_s = answer.latency_s or time.perf_counter() - started
        return answer

    async def served(self, target: Target, timeout: float) -> Optional[frozenset[str]]:
        """The services `target` serves, from its health signed by its hotkey for this validator (None when it
        does not answer, or not with a signed answer)."""
        headers = sign_request(self.wallet, HEALTH_PATH, b"", target.hotkey, method="GET")
        try:
            payload = await self._exchange(target, HEALTH_PATH, b"", headers, timeout, method="GET")
            return frozenset(str(s) for s in json.loads(payload)["services"])
        except (WireError, TimeoutError, httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    async def _exchange(
        self, target: Target, path: str, body: bytes, headers: dict, timeout: float, method: str = "POST"
    ) -> bytes:
        """The body of `target`'s answer at `path`, once its status is 200 and its signature is the miner's for
        this validator; a WireError otherwise. wait_for bounds the whole exchange (httpx's timeout is per read)."""
        status, reply_headers, payload = await asyncio.wait_for(
            self._post(f"http://{target.endpoint}{path}", body, headers, timeout, method), timeout
        )
        if status != 200:
            raise WireError(_error_line(status, payload))
        verify_response(
            reply_headers, payload, path, miner_hotkey=target.hotkey, self_hotkey=self.hotkey, nonce_store=self.nonces
        )
        return payload

    async def _post(
        self, url: str, body: bytes, headers: dict, timeout: float, method: str = "POST"
    ) -> tuple[int, httpx.Headers, bytes]:
        """POST (or `method`); (status, headers, body), reading at most MAX_RESPONSE_BYTES."""
        async with self.http.stream(method, url, content=body, headers=headers, timeout=timeout) as response:
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise WireError(f"response exceeds {MAX_RESPONSE_BYTES} bytes")
                chunks.append(chunk)
            return response.status_code, response.headers, b"".join(chunks)


def miner_health(base_url: str, wallet, miner_hotkey: str, timeout: float = 5.0) -> dict:
    """The details of a miner's /v1/health (the services it serves, queues, models, devices): a GET signed by
    `wallet`, which must be the miner's own hotkey or one its access policy admits (the answer is signed back
    to it). Unsigned, /v1/health only says it is alive."""
    headers = sign_request(wallet, HEALTH_PATH, b"", miner_hotkey, method="GET")
    response = httpx.get(base_url + HEALTH_PATH, headers=headers, timeout=timeout)
    if response.status_code != 200:
        raise WireError(_error_line(response.status_code, response.content), status=response.status_code)
    return response.json()
