"""The miner's HTTP service: size cap -> btauth verify -> access policy ->
parse -> stake-ordered queue -> device pool (a replica's worker) -> FLAC -> signed response.

Every failure is a JSON body `{"error": "<one line>"}` with a 4xx/5xx status;
nothing a caller sends can crash the process or reach the filesystem.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from audionet.lib import services as registry
from audionet.lib.audio import encode_flac
from audionet.lib.auth import AccessPolicy, RestartSafeNonceStore, sign_response, verify_request
from audionet.lib.chain import Chain
from audionet.lib.connections import log as connection_log
from audionet.lib.errors import BackendError, WireError
from audionet.lib.limiter import PriorityLimiter
from audionet.lib.pool import Pool, from_backends, pool_label
from audionet.lib.protocol import RESPONSE_CONTENT_TYPE, ResponseMeta, pack_response, path_for, sha256_hex
from audionet.lib.timing import Timer
from audionet.models.base import Backend

log = logging.getLogger("miner")
BODY_DEADLINE_S = 30.0  # the whole body must arrive within this, however slowly it trickles


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


def request_target(request: Request) -> str:
    """The path and query string exactly as sent: what btauth/1 signs."""
    target = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    return (target + b"?" + query if query else target).decode("latin-1")


class MinerService:
    def __init__(
        self,
        wallet,
        chain: Chain,
        backends: Pool | Mapping[str, Backend],
        policy: AccessPolicy,
        max_waiting: int = 8,
        sync_interval: float = 60.0,
        timer: Timer | None = None,
        on_stop: Callable[[], None] | None = None,
    ):
        """`backends`: the device pool, or {service: backend} served as one single-slot replica each."""
        if not isinstance(backends, Pool):
            replicas = from_backends(backends)
            backends = Pool(replicas, timer or Timer("miner", device=pool_label(replicas)))
        self.wallet, self.chain, self.pool, self.policy = wallet, chain, backends, policy
        self.services = {name: registry.get(name) for name in self.pool.names()}
        self.hotkey = wallet.hotkey.ss58_address
        self.sync_interval = sync_interval
        # The stake line lets through as many as the pool has slots; the pool plans the rest of the line too.
        self.limiters = {name: PriorityLimiter(self.pool.capacity(name), max_waiting) for name in self.services}
        for name, limiter in self.limiters.items():
            self.pool.watch_line(name, lambda limiter=limiter: limiter.waiting)
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
        self.policy.screen(http.headers)
        body = await read_capped(http, service.max_request_bytes)
        caller = verify_request(http.headers, body, request_target(http), self.hotkey, self.nonces)
        priority = self.policy.admit(caller)
        try:
            request = service.parse(body)
            async with self.limiters[name].slot(priority):
                audio, elapsed, device, model = await self._generate(name, request)
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

    async def _generate(self, name: str, request) -> tuple:
        """(audio, generation seconds, device, model id) from the replica the pool picks."""
        try:
            audio, elapsed, device, model, _label = await self.pool.run(name, request)
        except (WireError, BackendError):
            raise
        except Exception as error:
            log.exception("%s backend failed", name)
            raise BackendError(f"{name} generation failed: {type(error).__name__}") from None
        return audio, elapsed, device, model

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

        @app.exception_handler(BackendError)
        async def backend_error(_request, error: BackendError):
            return JSONResponse({"error": str(error)}, status_code=500)

        for service in self.services:
            app.add_api_route(path_for(service), self._route(service), methods=["POST"])

        @app.get("/v1/health")
        async def health():
            return {
                "hotkey": self.hotkey,
                "services": {
                    s: {
                        "model": self.pool.model(s),
                        "busy": self.limiters[s].busy,
                        "waiting": self.limiters[s].waiting,
                        "served": self.served[s],
                        "replicas": self.pool.services[s].describe(),
                    }
                    for s in self.services
                },
                "devices": self.pool.devices(),
            }

        return app

    def _route(self, service: str):
        async def route(request: Request) -> Response:
            return await self.handle(service, request)

        route.__name__ = f"post_{service}"
        return route
