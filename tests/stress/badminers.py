"""Misbehaving miners over real HTTP: small asyncio servers on loopback, all in one background event loop.

Each one reads a request like a miner, then answers as its behaviour says: too slowly, a byte at a time,
too much, signed by the wrong key, an old answer replayed, signed bytes that are no answer ("garbage", kept out of
`BEHAVIOURS`, which the round scenario cycles through), or not at all. A "dead" miner is a registered endpoint
where nothing listens. The answers of issue 45 (bombs, compressed answers, a slow link, ...) are `bombs.KINDS`."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import threading
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.core.auth import sign_response
from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.protocol import MAX_RESPONSE_BYTES, ResponseMeta, pack_response, sha256_hex
from audionet.lib.core.wallet import create_wallet
from tests.stress import bombs

BEHAVIOURS = ("slow", "dead", "drip", "oversized", "wrong_signature", "replay", "hangup")
CLIP = encode_flac(Audio((0.2 * np.sin(np.arange(44_100) * 0.06)).astype(np.float32), 22_050))


@dataclass
class BadMiner:
    name: str
    behaviour: str
    wallet: object
    port: int
    validator_hotkey: str
    timeout_s: float
    stranger: object = None
    replayed: tuple[bytes, dict] | None = None
    sock: socket.socket | None = None  # bound to `port` since it was enlisted: no other process can take it

    def answer(self, path: str, body: bytes, *, signer=None, flac: bytes = CLIP) -> tuple[bytes, dict]:
        """A well-formed signed answer to `body` (signed by `signer`, by default this miner)."""
        seed = json.loads(body).get("seed", 0) if body.startswith(b"{") else 0
        meta = ResponseMeta(
            service=path.rsplit("/", 1)[-1],
            model="fake",
            device="cpu",
            generation_s=0.1,
            seed=seed,
            request_sha256=sha256_hex(body),
        )
        payload = pack_response(meta, flac)
        return payload, sign_response(signer or self.wallet, path, payload, self.validator_hotkey)

    def prepare(self) -> None:
        bombs.prepare(self.behaviour)
        if self.behaviour == "replay":  # an answer this miner really gave, to an earlier request
            old = json.dumps({"service": "tts", "text": "An earlier request.", "seed": 3}).encode()
            self.replayed = self.answer("/v1/tts", old)


def _head(status: str, length: int, headers: dict) -> bytes:
    return bombs.head(status, length, headers)


async def _behave(miner: BadMiner, writer: asyncio.StreamWriter, path: str, body: bytes) -> None:
    kind = miner.behaviour
    if kind in bombs.KINDS:
        await bombs.send(miner, writer, path, body)
        return
    if kind == "hangup":
        return
    if kind == "oversized":
        size = MAX_RESPONSE_BYTES + 1_000_000
        writer.write(_head("200 OK", size, {}))
        chunk = b"\0" * 65_536
        for _ in range(size // len(chunk) + 1):
            writer.write(chunk)
            await writer.drain()
        return
    if kind == "slow":
        await asyncio.sleep(miner.timeout_s + 5)
    if kind == "replay":
        payload, headers = miner.replayed
    elif kind == "garbage":
        payload = os.urandom(4096)
        headers = sign_response(miner.wallet, path, payload, miner.validator_hotkey)
    else:
        payload, headers = miner.answer(path, body, signer=miner.stranger if kind == "wrong_signature" else None)
    if kind == "drip":
        writer.write(_head("200 OK", len(payload), headers))
        for index in range(len(payload)):
            writer.write(payload[index : index + 1])
            await writer.drain()
            await asyncio.sleep(0.5)
        return
    writer.write(_head("200 OK", len(payload), headers) + payload)
    await writer.drain()


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """(head, body) of the next request on a connection (asyncio.IncompleteReadError once it closes)."""
    head = await reader.readuntil(b"\r\n\r\n")
    match = re.search(rb"content-length:\s*(\d+)", head, re.IGNORECASE)
    return head, await reader.readexactly(int(match.group(1)) if match else 0)


async def _serve_one(miner: BadMiner, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head, body = await read_request(reader)
        await _behave(miner, writer, head.split(b" ")[1].decode(), body)
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.CancelledError):
        pass  # the validator gave up on us, or the servers are stopping: as intended
    finally:
        writer.close()


class BadMinerServers:
    """Every bad miner's server, run by one event loop in a background thread."""

    def __init__(self, miners: list[BadMiner]):
        self.miners = miners
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.servers: list[asyncio.Server] = []

    async def _start(self) -> None:
        for miner in self.miners:
            miner.prepare()
            if miner.behaviour != "dead":  # a dead one stays bound, not listening: its connections are refused
                handler = lambda r, w, m=miner: _serve_one(m, r, w)  # noqa: E731
                where = {"sock": miner.sock} if miner.sock else {"host": "127.0.0.1", "port": miner.port}
                self.servers.append(await asyncio.start_server(handler, **where))

    async def _stop(self) -> None:
        for server in self.servers:
            server.close()
        for miner in self.miners:
            if miner.sock is not None:
                miner.sock.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def __enter__(self) -> BadMinerServers:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(60)
        return self

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def enlist(
    chain_path: str, netuid: int, wallets: str, behaviours, validator_hotkey: str, timeout_s: float, stranger
) -> list[BadMiner]:
    """One bad miner per entry of `behaviours` (`bad<n>-<behaviour>`), registered on the offline chain with its
    endpoint published; their servers start with `BadMinerServers`."""
    chain, miners = OfflineChain(chain_path, netuid), []
    for index, behaviour in enumerate(behaviours):
        name = f"bad{index:02d}-{behaviour}"
        wallet = create_wallet(name, "default", wallets)
        chain.register(wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))  # held from now on (a port only found free could be taken before its server starts)
        port = sock.getsockname()[1]
        miner = BadMiner(name, behaviour, wallet, port, validator_hotkey, timeout_s, stranger=stranger, sock=sock)
        asyncio.run(OfflineChain(chain_path, netuid, wallet=wallet).serve("127.0.0.1", miner.port))
        miners.append(miner)
    return miners
