"""The files of the package one signed POST /v1/tts runs through, and the calls between them: a miner on the guarded
server (uvicorn with the connection guard, espeak-ng's TTS) on loopback, profiled in every thread during the
second of two requests (the first loads what loads once). Issue 41 asks for at most 12 files and no call from a
lower module back into the app.

    python scripts/request_path.py            # the counts, the files, any call into lib/miner/app.py from below
    python scripts/request_path.py --calls    # and every call between files
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

import audionet
from audionet.lib.core.auth import AccessPolicy, sign_request
from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.wallet import create_wallet
from audionet.lib.miner.app import MinerApp
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.limits import GuardSettings, stake_share
from audionet.lib.miner.pool import from_backends
from audionet.lib.miner.server import guarded_config
from audionet.lib.services import TTS

CHECKOUT = Path(os.path.realpath(Path(audionet.__file__).parent / "lib")).parent
APP = "lib/miner/app.py"


class Recorder:
    """A profile hook: the package's files that run, and (caller file, function, callee file, function) pairs."""

    def __init__(self):
        self.on, self.files, self.calls, self.lock = False, set(), set(), threading.Lock()

    @staticmethod
    def own(path: str):
        if path.startswith("<"):
            return None
        real = os.path.realpath(path)
        inside = real.startswith(str(CHECKOUT) + os.sep) and f"{os.sep}.venv{os.sep}" not in real
        return os.path.relpath(real, CHECKOUT) if inside else None

    def __call__(self, frame, event, _arg):
        if event != "call" or not self.on or (callee := self.own(frame.f_code.co_filename)) is None:
            return
        back = frame.f_back
        while back is not None and self.own(back.f_code.co_filename) is None:
            back = back.f_back
        with self.lock:
            self.files.add(callee)
            caller = self.own(back.f_code.co_filename) if back is not None else None
            if caller is not None and caller != callee:
                self.calls.add((caller, back.f_code.co_name, callee, frame.f_code.co_name))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> int:
    folder = tempfile.mkdtemp()
    chain = OfflineChain(os.path.join(folder, "chain.sqlite"))
    miner, validator = create_wallet("miner", "default", folder), create_wallet("validator", "default", folder)
    chain.register(
        validator.hotkey.ss58_address, validator.coldkeypub.ss58_address, stake=1000.0, validator_permit=True
    )
    chain.register(miner.hotkey.ss58_address, miner.coldkeypub.ss58_address)
    policy = AccessPolicy()
    guard = ConnectionGuard(GuardSettings(), shares=stake_share(policy, miner.hotkey.ss58_address))
    app = MinerApp(miner, chain, from_backends({"tts": TTS.load_backend("baseline:espeak")}), policy, guard=guard)
    port, recorder = free_port(), Recorder()
    threading.setprofile(recorder)  # every thread started from here on: the server's and its worker threads
    server = uvicorn.Server(guarded_config(guard, app.app(), "127.0.0.1", port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    with httpx.Client(timeout=60) as client:
        for seed in (1, 2):
            body = json.dumps({"text": "Count the files I pass through.", "seed": seed}).encode()
            headers = sign_request(validator, "/v1/tts", body, miner.hotkey.ss58_address)
            recorder.on = seed == 2
            reply = client.post(f"http://127.0.0.1:{port}/v1/tts", content=body, headers=headers)
            recorder.on = False
            if reply.status_code != 200:
                print(f"POST /v1/tts answered {reply.status_code}: {reply.text}", file=sys.stderr)
                return 1
    server.should_exit = True
    thread.join(10)
    threading.setprofile(None)
    up = sorted({f"{c[0]}:{c[1]} -> {c[3]}" for c in recorder.calls if c[2] == APP})
    print(f"POST /v1/tts: {len(recorder.files)} files, {len(recorder.calls)} distinct calls between files")
    for name in sorted(recorder.files):
        print(f"  {name}")
    print(f"calls into {APP} from other modules: {len(up)}" + "".join(f"\n  {line}" for line in up))
    if "--calls" in sys.argv:
        for call in sorted(recorder.calls):
            print(f"  {call[0]}:{call[1]} -> {call[2]}:{call[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
