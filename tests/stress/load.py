"""Load on a live miner: many valid signed requests at once, and many idle or slow connections held open."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Callable

import httpx

from audionet.lib.core.auth import sign_request
from audionet.lib.services import TTS
from tests.stress.common import (
    LiveMiner,
    latency_figures,
    log_since,
    log_size,
    raise_fd_limit,
    rss_mb,
    status_counts,
)

ANSWERED = (200, 429, 503)
PER_SOURCE = 25  # requests of a burst per source address


def signed_tts(live: LiveMiner, index: int) -> tuple[bytes, dict]:
    body = json.dumps({"text": f"Request number {index} of the burst.", "seed": index}).encode()
    return body, sign_request(live.validator, "/v1/tts", body, live.miner.hotkey)


async def _burst(live: LiveMiner, count: int, timeout: float, progress: Callable[[int], None]) -> list[tuple]:
    # One loopback address may hold at most --miner.max_unverified_per_ip (64) connections before their signatures
    # verify; a burst of hundreds from one validator is not what a subnet sends, so it comes from several
    # addresses (all of 127.0.0.0/8 is loopback on Linux).
    sources = [f"127.3.0.{1 + k}" for k in range(-(-count // PER_SOURCE))]
    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(
                    base_url=live.url,
                    timeout=timeout,
                    limits=limits,
                    transport=httpx.AsyncHTTPTransport(local_address=source, limits=limits),
                )
            )
            for source in sources
        ]

        async def one(index: int) -> tuple:
            client = clients[index % len(clients)]
            body, headers = signed_tts(live, index)
            started = time.perf_counter()
            try:
                response = await asyncio.wait_for(client.post("/v1/tts", content=body, headers=headers), timeout)
                status = response.status_code
            except (TimeoutError, httpx.TimeoutException):
                status = "timeout"
            except httpx.HTTPError as error:
                status = type(error).__name__
            progress(1)
            return status, time.perf_counter() - started

        return await asyncio.gather(*(one(i) for i in range(count)))


def run_concurrent(
    live: LiveMiner, count: int, waves: int = 2, timeout: float = TTS.timeout_s, progress=lambda n: None
) -> dict:
    """`waves` bursts of `count` valid signed TTS requests sent at once; the miner's RSS before and after."""
    warm_body, warm_headers = signed_tts(live, 10**6)
    httpx.post(f"{live.url}/v1/tts", content=warm_body, headers=warm_headers, timeout=60).raise_for_status()
    rss = [rss_mb(live.pid)]
    results = []
    for _ in range(waves):
        results += asyncio.run(_burst(live, count, timeout, progress))
        time.sleep(0.5)
        rss.append(rss_mb(live.pid))
    statuses = [status for status, _ in results]
    return {
        "requests": len(results),
        "concurrent": count,
        "waves": waves,
        "timeout_s": timeout,
        "statuses": status_counts(statuses),
        "lost": sum(status not in ANSWERED for status in statuses),
        "latency": latency_figures([latency for _, latency in results]),
        "rss_mb": {"before": rss[0], "after_each_wave": rss[1:], "growth": rss[-1] - rss[0]},
        "queue_after": live.queue(TTS.name),
        "alive": live.alive(),
    }


def _timed(call) -> tuple[object, float]:
    started = time.perf_counter()
    try:
        status = call().status_code
    except httpx.HTTPError as error:
        status = type(error).__name__
    return status, time.perf_counter() - started


def run_idle(live: LiveMiner, count: int, probes: int = 10, progress=lambda n: None) -> dict:
    """Hold `count` connections open (a third idle, a third with a head that never ends, a third dribbling
    one byte a second) from 16 addresses; meanwhile time health checks and signed requests from another."""
    raise_fd_limit(count + 512)
    log_start = log_size(live.miner.log_path)
    held: list[socket.socket] = []
    opened_at = time.perf_counter()
    try:
        for index in range(count):  # from 16 loopback addresses other than the probes' (127.0.0.1)
            source = (f"127.4.0.{1 + index % 16}", 0)
            sock = socket.create_connection(("127.0.0.1", live.miner.port), source_address=source)
            if index % 3 == 1:
                sock.sendall(b"POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(sock)
            progress(1)
        opened_s = time.perf_counter() - opened_at
        health, signed = [], []
        for probe in range(probes):
            for index, sock in enumerate(held):  # the dribblers go on dribbling
                if index % 3 == 2:
                    try:
                        sock.send(b"X")
                    except OSError:
                        pass  # closed by the miner's cap or head deadline: as intended
            health.append(_timed(lambda: httpx.get(f"{live.url}/v1/health", timeout=5)))
            body = json.dumps({"text": "Served despite the crowd.", "seed": probe}).encode()
            headers = sign_request(live.validator, "/v1/tts", body, live.miner.hotkey)
            signed.append(
                _timed(lambda b=body, h=headers: httpx.post(f"{live.url}/v1/tts", content=b, headers=h, timeout=5))
            )
            time.sleep(1.0)
    finally:
        for sock in held:
            sock.close()
    log_lines = log_since(live.miner.log_path, log_start).splitlines()
    return {
        "connections": count,
        "opened_s": opened_s,
        "health": {"statuses": status_counts([s for s, _ in health]), **latency_figures([t for _, t in health])},
        "signed": {"statuses": status_counts([s for s, _ in signed]), **latency_figures([t for _, t in signed])},
        "miner_log_lines": len(log_lines),
        "alive": live.alive(),
    }
