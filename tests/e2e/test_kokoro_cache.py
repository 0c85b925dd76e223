"""A fresh machine: several miner processes assemble the Kokoro model file at once
(`make localnet` starts three), on an empty cache, and every one of them gets it."""

import os
import subprocess
import sys
import time

import pytest

from tests.files import REPO

pytestmark = pytest.mark.timeout(300)
PROCESSES = 4

# Each child imports everything first, then waits for the go file, so the assemblies overlap.
CHILD = """
import os, sys, time
from audionet.models.kokoro import tts
go = sys.argv[1]
open(go + "." + str(os.getpid()), "w").close()
while not os.path.exists(go):
    time.sleep(0.005)
tts.runtime()
print("ready", os.path.getsize(os.path.join(os.environ["KOKORO_JA_CACHE"], "kokoro-v1.0.int8.onnx")))
"""


def test_processes_on_an_empty_cache_all_get_the_model(tmp_path):
    cache, go = tmp_path / "cache", str(tmp_path / "go")
    env = dict(os.environ, KOKORO_JA_CACHE=str(cache))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, go], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(PROCESSES)
    ]
    try:
        deadline = time.monotonic() + 180
        while len([p for p in os.listdir(tmp_path) if p.startswith("go.")]) < PROCESSES:
            assert all(c.poll() is None for c in children) and time.monotonic() < deadline
            time.sleep(0.05)
        open(go, "w").close()
        results = [child.communicate(timeout=240) for child in children]
    finally:
        for child in children:
            child.kill() if child.poll() is None else None
    for child, (out, err) in zip(children, results):
        assert child.returncode == 0, err.decode()[-2000:]
        assert out.decode().startswith("ready "), out
    sizes = {int(out.split()[1]) for out, _ in results}
    assert len(sizes) == 1 and sizes.pop() > 50_000_000
    assert not [name for name in os.listdir(cache) if name.endswith(".tmp")]  # no half-written leftovers
