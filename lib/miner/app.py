"""The miner's HTTP service: screen -> size cap -> btauth verify (the connection becomes the caller's, within
its share of connections) -> access policy -> a place in line (within its share) -> parse (the spoken length
is measured) -> the scheduler (stake-ordered line and device pool, `lib.miner.pool`), while the client stays
connected -> FLAC -> signed response.

Every failure is a JSON body `{"error": "<one line>"}` with a 4xx/5xx status, and closes its connection (a
refused request cannot keep a connection busy); nothing a caller sends can crash the process or reach the
filesystem. /v1/health is liveness for anyone, paced per address; its details (among them the services this
miner serves: validators ask it for those only) only for a signed GET (the miner's own hotkey or a caller the
access policy admits), paced per caller and signed back to it. The miner's own hotkey may also ask for audio
(`audionet-miner check` goes through the published endpoint as a validator would), last in the line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from audionet.lib.core.audio import encode_flac
from audionet.lib.core.auth import (
    AccessPolicy,
    RestartSafeNonceStore,
    claimed_hotkey,
    request_target,
    sign_response,
    verify_request,
)
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
from audionet.lib.miner.connections import VERIFIED_EXTENSION
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.guard import log as connection_log
from audionet.lib.miner.health import Health
from audionet.lib.miner.limits import Caller, GuardSettings, percent, stake_share
from audionet.lib.miner.pool import Place, Pool
from audionet.lib.services import registry

log = logging.getLogger("miner")
CLOSE = {"connection": "close"}  # on every refusal: the connection is not kept for another request
OWN_PRIORITY = -1.0  # the miner's own requests (its self-check): behind every validator, whatever its stake


def declared_size(request: Request, limit: int) -> int:
    """The body size `request` declares (its Content-Length), else the service's cap."""
    declared = request.headers.get("content-length", "")
    return min(int(declared), limit) if declared.isdigit() else limit


async def read_capped(request: Request, limit: int, deadline_s: float) -> bytes:
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


def log_refusal(request: Request, status: int, reason: str) -> None:
    """One line for a refusal the app sends, with the reason the caller received. Its kind is its path and
    status: the server's throttle (`lib/miner/server.LogThrottle`) keeps a flood to one line per kind a minute,
    counting the rest."""
    address = request.client.host if request.client else "?"
    connection_log.warning(f"refused {request.method} {request.url.path} with {status}: %s (from %s)", reason, address)


class ClientLeft(Exception):
    """The client disconnected while its request waited or generated."""


async def until_disconnected(request: Request) -> None:
    """Return when the client goes away (call once the whole body has been read)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def mark_verified(request: Request, hotkey: str) -> bool:
    """Tell the connection guard this connection is `hotkey`'s now (absent outside the guarded server); False
    when `hotkey` already holds its share of connections and none of them idles."""
    verified = request.scope.get("extensions", {}).get(VERIFIED_EXTENSION)
    return True if verified is None else verified(hotkey)


class MinerApp:
    def __init__(
        self,
        wallet,
        chain: Chain,
        pool: Pool,
        policy: AccessPolicy,
        sync_interval: float = 60.0,
        on_stop: Callable[[], None] | None = None,
        guard: ConnectionGuard | None = None,
    ):
        """`pool`: the scheduler and device pool (`pool.from_backends` makes one of {service: backend}). `guard`:
        the connection guard of the server that serves this app (its limits, places and `limits.stake_share` of
        `policy`; default: one with the default settings, for an app served without it)."""
        self.wallet, self.chain, self.pool, self.policy = wallet, chain, pool, policy
        self.services = {name: registry.get(name) for name in self.pool.names()}
        self.hotkey = wallet.hotkey.ss58_address
        self.sync_interval = sync_interval
        # the guard holds places by the same stake share as the line (`limits.stake_share`, built once)
        self.guard = guard or ConnectionGuard(GuardSettings(), shares=stake_share(policy, self.hotkey))
        self.share = self.guard.shares
        self.nonces = RestartSafeNonceStore()
        self.served = {service: 0 for service in self.services}
        self.health = Health(self.hotkey, self.nonces.started_ns, self.pool, self.guard, self.share, self.served)
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
        arrived_ns = time.time_ns()  # its head is in: the nonce is judged fresh at this moment, not the body's last
        service = self.services[name]
        path = path_for(name)
        if claimed_hotkey(http.headers) != self.hotkey:  # its own hotkey: `audionet-miner check`
            self.policy.screen(http.headers)  # refuses strangers; a claimed hotkey earns nothing more
        limit = service.max_request_bytes
        body = await read_capped(http, limit, self.guard.settings.body_deadline_s(declared_size(http, limit)))
        caller = verify_request(
            http.headers, body, request_target(http), self.hotkey, self.nonces, received_ns=arrived_ns
        )
        self.claim_connection(http, caller)
        own = caller == self.hotkey
        who = Caller(caller, OWN_PRIORITY if own else self.policy.admit(caller), self.share(caller))
        try:
            # a full line, or the caller's share of it, answers before parsing
            async with self.pool.place(name, who) as place:
                request = await place.parse(body)
                audio, elapsed, device, model = await self._generate_while_connected(http, name, place, request)
            if audio.seconds > service.answer_limit_s:  # text the length check could not tell: still the caller's
                raise WireError(
                    f"the answer is {audio.seconds:.1f} s of audio; the limit is {service.answer_limit_s:g} s",
                    spent=True,
                )
        except WireError as error:  # refused before any generation (400, 503): it does not count
            if not error.spent and not own:
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

    async def answer_health(self, http: Request) -> Response:
        """/v1/health: liveness for an unsigned GET; the details, signed back, for the miner's own hotkey or a
        caller the access policy admits (its connection is then the caller's, as for audio)."""
        claimed = claimed_hotkey(http.headers)
        if not claimed:
            return await self.health.liveness(http)
        if claimed != self.hotkey:
            self.policy.screen(http.headers)
        caller = verify_request(http.headers, b"", request_target(http), self.hotkey, self.nonces, method="GET")
        if caller != self.hotkey:
            self.policy.member(caller)
        self.claim_connection(http, caller)
        body = await self.health.answer(caller)
        headers = sign_response(self.wallet, HEALTH_PATH, body, caller)
        return Response(body, media_type="application/json", headers=headers)

    def claim_connection(self, http: Request, caller: str) -> None:
        """The connection is `caller`'s now; a 503 when it already holds its share of connections, all busy."""
        if not mark_verified(http, caller):
            raise WireError(
                f"this caller holds {self.guard.limit(caller)} connections to this miner, its share"
                f" ({percent(self.share(caller))} of the stake), and none is idle",
                status=503,
            )

    async def _generate_while_connected(self, http: Request, name: str, place: Place, request) -> tuple:
        """(audio, generation seconds, device, model id) from the scheduler; if the client leaves first, its
        request leaves the line (or its generation is abandoned) and this raises ClientLeft."""
        work = asyncio.ensure_future(self._generate(name, place, request))
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

    async def _generate(self, name: str, place: Place, request) -> tuple:
        try:
            audio, elapsed, device, model, _label = await place.generate(request)
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
        async def wire_error(request: Request, error: WireError):
            log_refusal(request, error.status, error.message)
            return JSONResponse({"error": error.message}, status_code=error.status, headers=CLOSE)

        @app.exception_handler(ClientDisconnect)
        async def disconnected(request: Request, _error: ClientDisconnect):
            # one line, no traceback: a client that leaves mid-request is not the miner's problem
            connection_log.info(
                "%s %s: the client disconnected before sending the whole request", request.method, request.url.path
            )
            return Response(status_code=400, headers=CLOSE)

        @app.exception_handler(ClientLeft)
        async def left(request: Request, _error: ClientLeft):
            connection_log.info("%s: a client left before its answer; its request was dropped", request.url.path)
            return Response(status_code=499, headers=CLOSE)

        @app.exception_handler(BackendError)
        async def backend_error(request: Request, error: BackendError):
            log_refusal(request, 500, str(error))
            return JSONResponse({"error": str(error)}, status_code=500, headers=CLOSE)

        for service in self.services:
            app.add_api_route(path_for(service), self._route(service), methods=["POST"])

        app.add_api_route(HEALTH_PATH, self.answer_health, methods=["GET"])

        return app

    def _route(self, service: str):
        async def route(request: Request) -> Response:
            return await self.handle(service, request)

        route.__name__ = f"post_{service}"
        return route
