"""Many lightweight miners in one process: one loopback port and one hotkey per miner, one ASGI app behind them.

Each answer is a spliced clip (`answers.py`, made ahead: a request costs a signature) in the real response
format, signed by the miner's hotkey for the validator that asked, answering exactly its request: everything
the validator checks holds. The request's own signature is not checked (the miners' cost is not what the
study measures). `--spread S`: each answer waits a random 0-S s first (generation time, no CPU). `--recyclers R`:
the first R miners answer every request with the same splice cut to the length asked (`Bank.recycled`), so their
answers are near-duplicates of their earlier ones, as a miner that replays old audio would send (the stress
suite's soak: the duplicate gate and history at work).

    python -m audionet.benchmarks.validator_scale.server --bank DIR --miners 256 --premade 2000 --ready FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket

from audionet.benchmarks.validator_scale.answers import Bank, Premade
from audionet.lib.core.auth import claimed_hotkey, sign_response
from audionet.lib.core.protocol import RESPONSE_CONTENT_TYPE, ResponseMeta, pack_response, sha256_hex
from audionet.lib.services import registry

MODEL = "validator-scale:spliced"


def miner_key(index: int):
    """The hotkey of lightweight miner `index` (the study and this process derive the same ones)."""
    import bittensor as bt

    return bt.sp_core.Keypair.create_from_uri(f"//audionet-validator-scale/{index}")


class Miners:
    """The ASGI app: the port a request came in on says which miner answers it."""

    def __init__(
        self,
        answers: Premade,
        keys_by_port: dict[int, object],
        spread_s: float = 0.0,
        recyclers: frozenset = frozenset(),
    ):
        self.answers, self.keys, self.spread_s, self.recyclers = answers, keys_by_port, spread_s, recyclers

    async def __call__(self, scope, receive, send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        path, port = scope["path"], scope["server"][1]
        status, reply = self.reply(path, port, body)
        if self.spread_s > 0:
            await asyncio.sleep(random.uniform(0.0, self.spread_s))
        extra = sign_response(self.keys[port], path, reply, claimed_hotkey(headers) or "") if status == 200 else {}
        head = [(b"content-type", RESPONSE_CONTENT_TYPE.encode()), (b"content-length", str(len(reply)).encode())]
        head += [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": reply})

    def reply(self, path: str, port: int, body: bytes) -> tuple[int, bytes]:
        name = path.rsplit("/", 1)[-1]
        if name not in registry.names() or port not in self.keys:
            return 404, b'{"error": "unknown service"}'
        service = registry.get(name)
        request = service.request_model.model_validate_json(body)
        meta = ResponseMeta(
            service=name,
            model=MODEL,
            device="cpu",
            generation_s=0.0,
            seed=request.seed,
            request_sha256=sha256_hex(body),
        )
        flac = self.answers.recycled(request) if port in self.recyclers else self.answers.flac(request)
        return 200, pack_response(meta, flac)


def listen(count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(256)
        sockets.append(sock)
    return sockets


def main(argv=None) -> int:
    import resource

    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bank", required=True, help="the folder Bank.save wrote")
    parser.add_argument("--miners", type=int, required=True)
    parser.add_argument("--premade", type=int, default=0, help="answers made ahead per service")
    parser.add_argument("--spread", type=float, default=0.0, help="each answer waits a random 0-S seconds")
    parser.add_argument("--recyclers", type=int, default=0, help="the first R miners send the same audio every time")
    parser.add_argument("--ready", required=True, help="written when listening: JSON [[hotkey, port], ...]")
    args = parser.parse_args(argv)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8 * args.miners + 1024)), hard))
    sockets = listen(args.miners)
    keys = [miner_key(i) for i in range(args.miners)]
    answers = Premade(Bank.load(args.bank), args.premade)
    ports = [s.getsockname()[1] for s in sockets]
    app = Miners(answers, dict(zip(ports, keys)), args.spread, frozenset(ports[: args.recyclers]))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, timeout_keep_alive=60)
    server = uvicorn.Server(config)
    tmp = args.ready + ".tmp"
    with open(tmp, "w") as handle:
        json.dump([[k.ss58_address, s.getsockname()[1]] for s, k in zip(sockets, keys)], handle)
    os.replace(tmp, args.ready)
    asyncio.run(server.serve(sockets=sockets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
