"""Floods of issue 24 against a live miner: connections that claim a validator's hotkey and send a head and no
body (held and refilled), a pipelined /v1/health flood, a 64 KB head in one send; meanwhile the registered
validator's signed TTS requests are timed.

On loopback every client is 127.0.0.1 unless it binds another source address: all of 127.0.0.0/8 is loopback on
Linux, so the hostile connections here come from 250 addresses (127.1.0.1 ... 127.1.0.250), 8 per address, as
many hosts would send them, below the per-address cap (64): the budget for unverified connections is what they
meet. The validator's requests come from 127.0.0.1.
"""

from __future__ import annotations

import json
import socket
import threading
import time

from audionet.lib.miner.addresses import FLOOD_ARRIVALS
from audionet.lib.services import TTS
from tests.gated import wait_until
from tests.stress.attackers import SocketCrowd
from tests.stress.common import (
    LiveMiner,
    latency_figures,
    log_since,
    log_size,
    post_signed,
    raise_fd_limit,
)

ADDRESSES = 250


def validator_tts(live: LiveMiner, seed: int, timeout: float = TTS.timeout_s) -> tuple[object, float]:
    """One signed TTS request from the registered validator: (status or error name, seconds)."""
    body = json.dumps({"text": f"The validator asks for sentence {seed}.", "seed": seed}).encode()
    return post_signed(live, live.validator, "/v1/tts", body, timeout)


def run_lockout(live: LiveMiner, connections: int = 2000, probes: int = 20) -> dict:
    """Hold `connections` head-only connections that claim the validator's hotkey (`Content-Length: 1000`, no
    body), refilling any that close; meanwhile the validator sends `probes` signed TTS requests one by one."""
    raise_fd_limit(connections + 1024)
    log_start = log_size(live.miner.log_path)
    hotkey = live.validator.hotkey.ss58_address
    head = f"POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-Bittensor-Hotkey: {hotkey}\r\nContent-Length: 1000\r\n\r\n"
    # every connection sends the head again as soon as it is answered, and is reopened when closed
    flood = SocketCrowd(live.miner.port, connections, ADDRESSES, 1, lambda _: head.encode(), again=True)
    flood.start()
    try:
        # the flood fills the miner's connections before the first probe: once full, the miner closes some and the
        # flood opens them again, until every address it comes from has opened enough to count as flooding
        filled = connections + ADDRESSES * FLOOD_ARRIVALS
        wait_until(lambda: flood.opened > filled, timeout_s=120, what="the flood filling the miner's connections")
        results = [validator_tts(live, seed) for seed in range(probes)]
    finally:
        flood.stop()
    statuses = [status for status, _ in results]
    return {
        "connections": connections,
        "addresses": ADDRESSES,
        "opened": flood.opened,
        "answers_to_flood": sum(flood.statuses.values()),
        "probes": probes,
        "served_in_time": sum(status == 200 for status in statuses),
        "statuses": [str(status) for status in statuses],
        "latency": latency_figures([seconds for _, seconds in results]),
        "timeout_s": TTS.timeout_s,
        "miner_log_lines": len(log_since(live.miner.log_path, log_start).splitlines()),
        "alive": live.alive(),
    }


class HealthFlood(threading.Thread):
    """`connections` connections, each writing `pipeline` GET /v1/health at once and reading the answers."""

    def __init__(self, port: int, connections: int = 8, pipeline: int = 50):
        super().__init__(daemon=True)
        self.port, self.connections, self.pipeline = port, connections, pipeline
        self.stopping = threading.Event()
        self.statuses: dict[str, int] = {}

    def _one(self) -> None:
        burst = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n" * self.pipeline
        while not self.stopping.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sock:
                    while not self.stopping.is_set():
                        sock.sendall(burst)
                        buffered = b""
                        while buffered.count(b"HTTP/1.1 ") < self.pipeline or not buffered.endswith(b"}"):
                            chunk = sock.recv(65536)
                            if not chunk:
                                raise ConnectionError("closed")
                            buffered += chunk
                        for part in buffered.split(b"HTTP/1.1 ")[1:]:
                            status = part[:3].decode()
                            self.statuses[status] = self.statuses.get(status, 0) + 1
            except OSError:
                continue

    def run(self) -> None:
        workers = [threading.Thread(target=self._one, daemon=True) for _ in range(self.connections)]
        for worker in workers:
            worker.start()
        self.stopping.wait()
        for worker in workers:
            worker.join(15)


def run_health_flood(live: LiveMiner, seconds: float = 10.0, probes: int = 10) -> dict:
    """Signed TTS latency without and with a pipelined /v1/health flood, side by side in one run."""
    quiet = [validator_tts(live, 1000 + i) for i in range(probes)]
    flood = HealthFlood(live.miner.port)
    flood.start()
    started = time.perf_counter()
    try:
        flooded = [validator_tts(live, 2000 + i) for i in range(probes)]
        time.sleep(max(0.0, seconds - (time.perf_counter() - started)))
    finally:
        flood.stopping.set()
        flood.join(30)
    elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "health_answers": dict(flood.statuses),
        "health_answers_per_s": sum(flood.statuses.values()) / elapsed,
        "quiet": {"statuses": sorted({str(s) for s, _ in quiet}), **latency_figures([t for _, t in quiet])},
        "flooded": {"statuses": sorted({str(s) for s, _ in flooded}), **latency_figures([t for _, t in flooded])},
        "alive": live.alive(),
    }


def run_big_head(live: LiveMiner, size: int = 64_000) -> dict:
    """One send of a `size`-byte head to the unauthenticated /v1/health."""
    with socket.create_connection(("127.0.0.1", live.miner.port), timeout=10) as client:
        client.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n")
        answer = client.recv(64)
    return {"head_bytes": size, "status": answer[9:12].decode(errors="replace") or "closed"}
