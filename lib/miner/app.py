"""The miner's HTTP service: screen -> size cap -> btauth verify (the connection leaves the budget for
unverified ones) -> access policy -> parse (the spoken length is measured) -> the scheduler (stake-ordered
line and device pool, `lib.pool`), while the client stays connected -> FLAC -> signed response.

Every failure is a JSON body `{"error": "<one line>"}` with a 4xx/5xx status;
nothing a caller sends can crash the process or reach the filesystem.
/v1/health is liveness for anyone; its details (among them the services this miner serves: validators ask it
for those only) only for a signed GET (the miner's own hotkey or a caller the access policy admits), signed back
to the caller; either way at most HEALTH_RATE answers a second.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from audionet.lib.core.audio import encode_flac
from audionet.lib.core.auth import AccessPolicy, RestartSafeNonceStore, claimed_hotkey, sign_response, verify_request
from audionet.lib.core.chain import Chain
from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.core.protocol import (
    HEALTH_PATH,
    RESPONSE_CONTENT_TYPE,
    ResponseMeta,
    pack_response,
    path_for,
    sha256_hex,
)
from audionet.lib.core.timing import Timer
from audionet.lib.miner.connections import VERIFIED_EXTENSION, Pacer
from audionet.lib.miner.connections import log as connection_log
from audionet.lib.miner.pool import Pool, from_backends, pool_label
from audionet.lib.services import registry
from audionet.models.base import Backend

log = logging.getLogger("miner")
# Before its signature verifies, a body must arrive within BODY_GRACE_S plus its size at BODY_MIN_RATE, and
# never later than BODY_DEADLINE_S: a 1 KB TTS request gets 2 s, a 2 MB voice-clone reference 22 s.
BODY_DEADLINE_S = 30.0
BODY_GRACE_S = 2.0
BODY_MIN_RATE = 100_000  # bytes per second
HEALTH_RATE, HEALTH_BURST, HEALTH_MAX_WAIT_S = 20.0, 20, 5.0


def body_deadline_s(request: Request, limit: int) -> float:
    """The time the body of `request` gets: by its Content-Length, else by the service's cap."""
    declared = request.headers.get("content-length", "")
    size = min(int(declared), limit) if declared.isdigit() else limit
    return min(BODY_DEADLINE_S, BODY_GRACE_S + size / BODY_MIN_RATE)


async def read_capped(request: Request, limit: int, deadline_s: float = BODY_DEADLINE_S) -> bytes:
    """The body, refusing (413) before reading when Content-Length is too big
    and while streaming when the sender lied or sent no length; 408 when it does not arrive in time."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise WireError("Content-Length is not a number")
        if int(declared) > limit:
            raise WireError(f"request is {declared} bytes; the limit is {limit}", status=413)
    chunks, size = [], 0
    try:
        async with asyncio.timeout(deadline_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise WireError(f"request exceeds the limit of {limit} bytes", status=413)
                chunks.append(chunk)
    except TimeoutError:
        raise WireError(f"the request body did not arrive within {deadline_s:g} s", status=408) from None
    return b"".join(chunks)


class ClientLeft(Exception):
    """The client disconnected while its request waited or generated."""


def request_target(request: Request) -> str:
    """The path and query string exactly as sent: what btauth/1 signs."""
    target = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    return (target + b"?" + query if query else target).decode("latin-1")


async def until_disconnected(request: Request) -> None:
    """Return when the client goes away (call once the whole body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def mark_verified(request: Request) -> None:
    """Tell the connection guard this connection has proven itself (absent outside the guarded server)."""
    verified = request.scope.get("extensions", {}).get(VERIFIED_EXTENSION)
    if verified is not None:
        verified()


class MinerApp:
    def __init__(
        self,
        wallet,
        chain: Chain,
        backends: Pool | Mapping[str, Backend],
        policy: AccessPolicy,
        sync_interval: float = 60.0,
        timer: Timer | None = None,
        on_stop: Callable[[], None] | None = None,
    ):
        """`backends`: the scheduler and device pool, or {service: backend} served as one single-slot replica
        each (with the pool's default line)."""
        if not isinstance(backends, Pool):
            replicas = from_backends(backends)
            backends = Pool(replicas, timer or Timer("miner", device=pool_label(replicas)))
        self.wallet, self.chain, self.pool, self.policy = wallet, chain, backends, policy
        self.services = {name: registry.get(name) for name in self.pool.names()}
        self.hotkey = wallet.hotkey.ss58_address
        self.sync_interval = sync_interval
        self.health_pacer = Pacer(HEALTH_RATE, HEALTH_BURST, HEALTH_MAX_WAIT_S)
        self.nonces = RestartSafeNonceStore()
        self.served = {service: 0 for service in self.services}
        # One measurement (the pool's, per replica) feeds both the timing log and the signed generation_s.
        self.timer = self.pool.timer
        # Runs at the server's shutdown (SIGTERM, SIGINT), before uvicorn re-raises the signal
        # and the process ends: the last timing record must be written by then.
        self.on_stop = on_stop

    async def sync(self) -> None:
        self.policy.update(await self.chain.metagraph())

    async def _sync_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sync_interval)
            try:
                await self.sync()
            except Exception as error:  # keep serving with the last metagraph
                log.warning("metagraph sync failed: %s", error)

    async def handle(self, name: str, http: Request) -> Response:
        service = self.services[name]
        path = path_for(name)
        self.policy.screen(http.headers)  # refuses strangers; a claimed hotkey earns nothing more
        body = await read_capped(http, service.max_request_bytes, body_deadline_s(http, service.max_request_bytes))
        caller = verify_request(http.headers, body, request_target(http), self.hotkey, self.nonces)
        mark_verified(http)
        priority = self.policy.admit(caller)
        try:
            with self.pool.place_held(name, priority):  # a full line answers before the text is measured
                request = await run_in_threadpool(service.parse, body)
            audio, elapsed, device, model = await self._generate_while_connected(http, name, request, priority)
            if audio.seconds > service.answer_limit_s:  # text the length check could not tell: still the caller's
                raise WireError(
                    f"the answer is {audio.seconds:.1f} s of audio; the limit is {service.answer_limit_s:g} s"
                )
        except WireError:  # refused (400, 503): only accepted requests count toward the rate limit
            self.policy.refund(caller)
            raise
        try:
            flac = await run_in_threadpool(encode_flac, audio, max_seconds=service.answer_limit_s)
        except WireError as error:  # our backend's fault, not the caller's: 500
            log.error("%s backend produced invalid audio: %s", name, error)
            raise BackendError(f"{name} backend produced invalid audio: {error}") from None
        meta = ResponseMeta(
            service=name,
            model=model[:128],
            device=device[:128],
            generation_s=elapsed,
            seed=request.seed,
            request_sha256=sha256_hex(body),
        )
        payload = pack_response(meta, flac)
        self.served[name] += 1
        log.info("%s for %s: %.2f s audio in %.2f s on %s", name, caller[:8], audio.seconds, elapsed, device)
        headers = sign_response(self.wallet, path, payload, caller)
        return Response(payload, media_type=RESPONSE_CONTENT_TYPE, headers=headers)

    async def _generate_while_connected(self, http: Request, name: str, request, priority: float) -> tuple:
        """(audio, generation seconds, device, model id) from the scheduler; if the client leaves first, its
        request leaves the line (or its generation is abandoned) and this raises ClientLeft."""
        work = asyncio.ensure_future(self._generate(name, request, priority))
        gone = asyncio.ensure_future(until_disconnected(http))
        try:
            done, _ = await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not work.done():
                work.cancel()
        if work in done:
            return work.result()
        await asyncio.gather(work, return_exceptions=True)
        raise ClientLeft()

    async def _generate(self, name: str, request, priority: float) -> tuple:
        try:
            audio, elapsed, device, model, _label = await self.pool.run(name, request, priority)
        except (WireError, BackendError):
            raise
        except Exception as error:
            log.exception("%s backend failed", name)
            raise BackendError(f"{name} generation failed: {type(error).__name__}") from None
        return audio, elapsed, device, model

    async def health(self, http: Request) -> Response:
        if not await self.health_pacer.turn():
            raise WireError("too many health requests; try again later", status=429)
        claimed = claimed_hotkey(http.headers)
        if not claimed:
            return JSONResponse({"status": "ok"})  # liveness: all an unsigned caller learns
        if claimed != self.hotkey:
            self.policy.screen(http.headers)
        caller = verify_request(http.headers, b"", request_target(http), self.hotkey, self.nonces, method="GET")
        if caller != self.hotkey:
            self.policy.member(caller)
        body = json.dumps(self.details()).encode()
        return Response(
            body, media_type="application/json", headers=sign_response(self.wallet, HEALTH_PATH, body, caller)
        )

    def details(self) -> dict:
        """What /v1/health tells a signed caller: the hotkey, when this process started (ns since the epoch;
        a request signed before it is refused), and per service its model, queue, served count and replicas;
        per device busy, waiting, served, failed and abandoned."""
        return {
            "status": "ok",
            "hotkey": self.hotkey,
            "started_ns": self.nonces.started_ns,
            "services": {
                s: {
                    "model": self.pool.model(s),
                    "busy": self.pool.dispatchers[s].busy,
                    "waiting": self.pool.dispatchers[s].waiting,
                    "served": self.served[s],
                    "replicas": self.pool.dispatchers[s].describe(),
                }
                for s in self.services
            },
            "devices": self.pool.devices(),
        }

    def app(self) -> FastAPI:
        @asynccontextmanager
        async def lifespan(_app):
            await self.sync()
            task = asyncio.create_task(self._sync_forever())
            yield
            task.cancel()
            if self.on_stop is not None:
                await asyncio.to_thread(self.on_stop)

        app = FastAPI(title="audionet miner", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)

        @app.exception_handler(WireError)
        async def wire_error(_request, error: WireError):
            return JSONResponse({"error": error.message}, status_code=error.status)

        @app.exception_handler(ClientDisconnect)
        async def disconnected(request: Request, _error: ClientDisconnect):
            # one line, no traceback: a client that leaves mid-request is not the miner's problem
            connection_log.info(
                "%s %s: the client disconnected before sending the whole request", request.method, request.url.path
            )
            return Response(status_code=400)

        @app.exception_handler(ClientLeft)
        async def left(request: Request, _error: ClientLeft):
            connection_log.info("%s: a client left before its answer; its request was dropped", request.url.path)
            return Response(status_code=499)

        @app.exception_handler(BackendError)
        async def backend_error(_request, error: BackendError):
            return JSONResponse({"error": str(error)}, status_code=500)

        for service in self.services:
            app.add_api_route(path_for(service), self._route(service), methods=["POST"])

        app.add_api_route(HEALTH_PATH, self.health, methods=["GET"])

        return app

    def _route(self, service: str):
        async def route(request: Request) -> Response:
            return await self.handle(service, request)

        route.__name__ = f"post_{service}"
        return route
