"""The miner's server set-up (lib/miner/server.py): the log throttle keeps hostile traffic to one line per kind, an
accept error to one line without a traceback; the listen backlog and the open-file limit leave room for the cap
and an accept burst, and a cap the hard limit cannot hold is one line."""

import logging
import os
import re
import socket
import subprocess
import sys

import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.localnet import free_port
from audionet.lib.miner import server
from audionet.lib.miner.limits import GuardSettings
from audionet.lib.miner.server import LogThrottle, ensure_fd_room
from tests.gated import wait_until

pytestmark = pytest.mark.timeout(120)


def test_the_log_throttle_keeps_one_line_per_kind_per_interval():
    now = [0.0]
    throttle = LogThrottle(60.0, clock=lambda: now[0])
    record = lambda msg: logging.LogRecord("uvicorn.error", logging.WARNING, "", 0, msg, (), None)  # noqa: E731
    passed = [throttle.filter(record("Invalid HTTP request received.")) for _ in range(1000)]
    assert passed.count(True) == 1
    assert throttle.filter(record("another kind"))
    now[0] = 61.0
    again = record("Invalid HTTP request received.")
    assert throttle.filter(again) and "999 more like this in the last 60 s" in again.getMessage()


def test_an_accept_error_is_one_line_and_a_bug_keeps_its_traceback():
    throttle = LogThrottle(60.0)
    error = OSError(24, "Too many open files")
    accept = logging.LogRecord(
        "asyncio",
        logging.ERROR,
        "",
        0,
        "socket.accept() out of system resource\nsocket: <fd=6>",
        (),
        (OSError, error, None),
    )
    assert throttle.filter(accept) and accept.exc_info is None
    assert accept.getMessage() == "socket.accept() out of system resource: OSError: [Errno 24] Too many open files"
    bug = logging.LogRecord("asyncio", logging.ERROR, "", 0, "Task exception", (), (KeyError, KeyError("x"), None))
    assert throttle.filter(bug) and bug.exc_info is not None


def test_the_backlog_is_as_long_as_the_open_file_room_allows(monkeypatch):
    limits = {}
    monkeypatch.setattr(server.resource, "getrlimit", lambda _kind: (1024, limits["hard"]))
    monkeypatch.setattr(server.resource, "setrlimit", lambda _kind, value: limits.update(set=value))
    limits["hard"] = 1024  # a cap of 512 leaves 384 files: four batches of 96
    assert ensure_fd_room(512) == 96 and limits.pop("set", None) is None  # the soft limit already fits
    limits["hard"] = 65536
    assert ensure_fd_room(512) == 1024 and limits["set"] == (512 + 4 * 1024 + 128, 65536)


def test_a_cap_above_the_hard_file_limit_is_one_line(monkeypatch):
    monkeypatch.setattr(server.resource, "getrlimit", lambda _kind: (1024, 1024))
    with pytest.raises(ConfigError) as error:
        ensure_fd_room(5000)
    assert "--miner.max_connections 5000 needs 5192 open files; the limit is 1024" in str(error.value)
    assert "\n" not in str(error.value)
    with pytest.raises(ConfigError, match="--miner.max_unverified 600 must be 1 to --miner.max_connections 512"):
        GuardSettings(5.0, 512, max_unverified=600)


CHILD = """
import logging, resource, sys
soft, cap, port = map(int, sys.argv[1:4])
interval_s = float(sys.argv[4])
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, soft))
logging.basicConfig(stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
import uvicorn
from audionet.lib.miner.server import guarded_config, throttle_logs
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.limits import GuardSettings
from tests.lib.miner.test_connections import app
config = guarded_config(ConnectionGuard(GuardSettings(5.0, cap)), app, "127.0.0.1", port, log_level="warning", lifespan="off")
server = uvicorn.Server(config)
throttle_logs(interval_s)
server.run()
"""


def test_running_out_of_file_descriptors_on_accept_is_one_throttled_line(tmp_path):
    """A soft limit below what the cap needs (ensure_fd_room would have raised it): accepting fails with
    "Too many open files" again and again while the burst lasts (asyncio retries every second), and the log
    says so once per throttle interval (1.5 s here, 60 s in a miner), counting the ones it dropped, with no
    traceback."""
    port, log_path = free_port(), tmp_path / "server.log"
    with open(log_path, "wb") as log:
        args = [sys.executable, "-c", CHILD, "128", "512", str(port), "1.5"]
        child = subprocess.Popen(args, stderr=log, cwd=os.getcwd())
    burst = []
    try:
        wait_until(lambda: _accepts(port), what="the server to listen")
        for index in range(600):
            sock = socket.socket()
            sock.setblocking(False)
            sock.bind((f"127.0.4.{1 + index % 200}", 0))
            sock.connect_ex(("127.0.0.1", port))
            burst.append(sock)
        wait_until(lambda: b"more like this" in log_path.read_bytes(), what="a throttled accept error")
    finally:
        for sock in burst:
            sock.close()
        child.terminate()
        child.wait(10)
    text = log_path.read_text()
    lines = [line for line in text.splitlines() if "Too many open files" in line]
    assert "Traceback" not in text and "more like this" not in lines[0], text
    assert any(re.search(r"\((\d+) more like this in the last 1.5 s\)", line) for line in lines[1:]), text


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False
