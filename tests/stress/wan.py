"""The honest probe of issue 37: a validator on a slow link running full rounds (TTS, voice clone and music at
once, as `validator_loop` does), and the operator's view of every place held (signed /v1/health).

Each request is sent by hand over its own connection from the validator's loopback address, with a pause of
0.05-0.5 s (a WAN's delays) between connect, head and body, and its answer must be a 200 whose signature
verifies, within the validator's timeout for its service. A round is complete when all three are.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

import bittensor as bt
import httpx
import numpy as np

from audionet.lib.core.audio import encode_flac
from audionet.lib.core.auth import sign_request, verify_response
from audionet.lib.core.protocol import HEALTH_PATH
from audionet.lib.miner.limits import CONNECTION_FLOOR, LINE_FLOOR, entitled
from audionet.lib.services import MUSIC, TTS, VC
from audionet.models.baselines.espeak import EspeakSynthesizer

DELAYS_S = (0.05, 0.5)  # between connect and head, and between head and body
ROUND_EVERY_S = 2.0  # a round starts at most this often: 90 requests a minute, under the rate limit of 120
TIMEOUTS = {TTS.name: TTS.timeout_s, VC.name: VC.timeout_s, MUSIC.name: MUSIC.timeout_s}
REFERENCE_TEXT = "A reference voice for cloning."


def reference_b64() -> str:
    clip = EspeakSynthesizer().synthesize(REFERENCE_TEXT, voice="en-gb+f3")
    return base64.b64encode(encode_flac(clip)).decode()


def round_bodies(seed: int, reference: str) -> dict[str, bytes]:
    """A round's three requests, as the validator draws them (each its own prompt and seed)."""
    return {
        TTS.name: json.dumps({"text": f"The validator asks for sentence number {seed}.", "seed": seed}).encode(),
        VC.name: json.dumps(
            {
                "text": f"Say sentence {seed} in my voice.",
                "reference_text": REFERENCE_TEXT,
                "reference_flac_b64": reference,
                "seed": seed,
            }
        ).encode(),
        MUSIC.name: json.dumps({"prompt": f"calm piano number {seed}", "seconds": 5.0, "seed": seed}).encode(),
    }


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict, bytes]:
    status = int((await reader.readline()).split(b" ", 2)[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return status, headers, body


@dataclass
class WanValidator:
    """A registered validator on a slow link: `wallet`, from loopback address `source`."""

    port: int
    miner_hotkey: str
    wallet: object
    source: str
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))
    upload_rate: Optional[float] = None  # bytes per second for bodies (None: at once)

    async def request(self, service: str, body: bytes) -> tuple[object, float]:
        """(200 when answered and signed truly, else the status or the error's name; seconds)."""
        path = f"/v1/{service}"
        pause_head, pause_body = self.rng.uniform(*DELAYS_S, size=2)
        started = time.perf_counter()
        try:
            async with asyncio.timeout(TIMEOUTS[service]):
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(self.source, 0))
                try:
                    await asyncio.sleep(pause_head)
                    headers = sign_request(self.wallet, path, body, self.miner_hotkey)
                    head = f"POST {path} HTTP/1.1\r\nHost: miner\r\nContent-Length: {len(body)}\r\n"
                    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
                    writer.write(head.encode())
                    await asyncio.sleep(pause_body)
                    await self._send_body(writer, body)
                    status, reply_headers, payload = await read_answer(reader)
                finally:
                    writer.close()
            if status == 200:
                verify_response(
                    reply_headers,
                    payload,
                    path,
                    miner_hotkey=self.miner_hotkey,
                    self_hotkey=self.wallet.hotkey.ss58_address,
                    nonce_store=bt.http_auth.InMemoryNonceStore(),
                )
            return status, time.perf_counter() - started
        except TimeoutError:
            return "timeout", time.perf_counter() - started
        except Exception as error:  # a reset, a refused connection, a bad signature: not served
            return type(error).__name__, time.perf_counter() - started

    async def _send_body(self, writer: asyncio.StreamWriter, body: bytes) -> None:
        if self.upload_rate is None:
            writer.write(body)
            await writer.drain()
            return
        step = max(1, int(self.upload_rate / 10))
        for start in range(0, len(body), step):
            writer.write(body[start : start + step])
            await writer.drain()
            await asyncio.sleep(0.1)

    async def full_round(self, seed: int, reference: str) -> dict:
        bodies = round_bodies(seed, reference)
        results = await asyncio.gather(*(self.request(service, body) for service, body in bodies.items()))
        answers = dict(zip(bodies, results))
        return {
            "complete": all(status == 200 for status, _ in answers.values()),
            "statuses": {service: str(status) for service, (status, _) in answers.items()},
            "seconds": max(seconds for _, seconds in answers.values()),
        }

    def rounds(self, count: int, reference: str, first_seed: int = 0) -> list[dict]:
        """`count` full rounds, one after another."""

        async def run() -> list[dict]:
            out = []
            for index in range(count):
                started = time.monotonic()
                out.append(await self.full_round(first_seed + index, reference))
                await asyncio.sleep(max(0.0, ROUND_EVERY_S - (time.monotonic() - started)))
            return out

        return asyncio.run(run())


def round_figures(rounds: list[dict]) -> dict:
    statuses: dict[str, dict[str, int]] = {}
    for row in rounds:
        for service, status in row["statuses"].items():
            statuses.setdefault(service, {}).setdefault(status, 0)
            statuses[service][status] += 1
    seconds = [row["seconds"] for row in rounds]
    return {
        "rounds": len(rounds),
        "complete": sum(row["complete"] for row in rounds),
        "statuses": statuses,
        "max_s": max(seconds, default=None),
        "median_s": float(np.median(seconds)) if seconds else None,
    }


class PlacesWatch(threading.Thread):
    """The operator's view: the miner's own hotkey asks its signed /v1/health every `interval_s` (from an address
    of its own), and keeps, per caller, the most it held of each kind of place against its entitlement."""

    def __init__(self, url: str, wallet, miner_hotkey: str, source: str = "127.0.7.1", interval_s: float = 0.25):
        super().__init__(daemon=True)
        self.url, self.wallet, self.miner_hotkey, self.interval_s = url, wallet, miner_hotkey, interval_s
        self.client = httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=5)
        self.stopping = threading.Event()
        self.most: dict[str, dict] = {}
        self.samples = self.failed = 0
        self.slowest_s = 0.0  # the operator's signed health, answered or not
        self.longest: dict[str, float] = {}

    def sample(self) -> Optional[dict]:
        headers = sign_request(self.wallet, HEALTH_PATH, b"", self.miner_hotkey, method="GET")
        started = time.perf_counter()
        try:
            response = self.client.get(self.url + HEALTH_PATH, headers=headers)
        except httpx.HTTPError:
            response = None
        self.slowest_s = max(self.slowest_s, time.perf_counter() - started)
        return response.json() if response is not None and response.status_code == 200 else None

    def run(self) -> None:
        while not self.stopping.is_set():
            details = self.sample()
            if details is None:
                self.failed += 1
            else:
                self.samples += 1
                self.record(details)
            self.stopping.wait(self.interval_s)

    def record(self, details: dict) -> None:
        for service, state in details["services"].items():
            longest = max(replica.get("longest_s", 0.0) for replica in state["replicas"])
            self.longest[service] = max(self.longest.get(service, 0.0), longest)
        places = details.get("places")
        if places is None:  # a miner from before places were counted
            return
        limits = places["limits"]
        for hotkey, held in places["callers"].items():
            line = held["parsing"] + held["waiting"] + held["generating"]
            share = held["share"]
            row = self.most.setdefault(
                hotkey,
                {
                    "share": share,
                    "connections": 0,
                    "line": 0,
                    "connections_entitled": entitled(share, limits["connections"], CONNECTION_FLOOR),
                    "line_entitled": sum(entitled(share, n, LINE_FLOOR) for n in limits["line"].values()),
                },
            )
            row["connections"] = max(row["connections"], held["connections"])
            row["line"] = max(row["line"], line)

    def stop(self) -> dict:
        self.stopping.set()
        self.join(10)
        last = self.sample()
        if last is not None:
            self.record(last)
        self.client.close()
        over = {
            hotkey: row
            for hotkey, row in self.most.items()
            if row["connections"] > row["connections_entitled"] or row["line"] > row["line_entitled"]
        }
        return {
            "samples": self.samples,
            "failed": self.failed,
            "slowest_s": self.slowest_s,
            "most": self.most,
            "over_share": over,
        }
