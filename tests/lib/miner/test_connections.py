"""The connection guard on a real uvicorn server on loopback: head deadline, the budget for unverified
connections, the per-address cap, the connection cap, the header cap however the head arrives, the log
throttle and the open-file room. (Who gives way to whom, and places by stake: test_guard.py.)"""

import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
import uvicorn

from audionet.lib.core.errors import ConfigError
from audionet.lib.localnet import free_port
from audionet.lib.miner import connections
from audionet.lib.miner.connections import VERIFIED_EXTENSION, LogThrottle, ensure_fd_room, guarded_config
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.limits import GuardSettings
from tests.gated import wait_until

pytestmark = pytest.mark.timeout(120)
HEAD_TIMEOUT_S = 1.0
GRACE_S = 0.5
CAP, UNVERIFIED, PER_ADDRESS = 50, 20, 8
HEAD_ONLY = b"POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"  # a head, then no body


async def app(scope, receive, send):
    """/verified proves the connection (as the miner does once a signature verifies: as the caller its client
    address names) and answers; /hold... keeps the request open until the client leaves (a busy connection),
    /hold-verified after proving it."""
    if scope["type"] != "http":
        return
    if scope["path"] in ("/verified", "/hold-verified"):
        scope["extensions"][VERIFIED_EXTENSION](f"caller-{scope['client'][0]}")
    if scope["path"].startswith("/hold"):
        while (await receive())["type"] != "http.disconnect":
            pass
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def server():
    settings = GuardSettings(HEAD_TIMEOUT_S, CAP, UNVERIFIED, PER_ADDRESS, grace_s=GRACE_S)
    guard = ConnectionGuard(settings, shares=lambda _caller: 0.01)
    served = uvicorn.Server(guarded_config(guard, app, "127.0.0.1", 0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    wait_until(lambda: served.started, what="the server start")
    yield served.servers[0].sockets[0].getsockname()[1], served
    served.should_exit = True
    thread.join(10)


def connect(port: int, source: str = "127.0.0.1", send: bytes = b"") -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    if send:
        sock.sendall(send)
    return sock


def closed_by_server(sock: socket.socket, wait_s: float = 15.0) -> bool:
    sock.settimeout(wait_s)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def settle(served) -> None:
    """Wait until every connection and request of earlier tests is gone."""
    state = served.server_state
    wait_until(lambda: not state.connections and not state.tasks, what="the earlier connections to close")


def test_an_idle_connection_is_closed_by_the_head_deadline(server):
    port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as idle:
        assert closed_by_server(idle)


def test_a_slowloris_dribbling_its_head_is_closed_by_the_deadline(server):
    port, _ = server
    head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.settimeout(0.1)
        started, closed = time.monotonic(), False
        for byte in head:  # each byte arrives well within the deadline, the head never does
            try:
                slow.sendall(bytes([byte]))
                closed = slow.recv(1) == b""
            except TimeoutError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                closed = True
            if closed:
                break
        assert closed, "the dribbling connection was never closed"
        assert time.monotonic() - started < len(head) * 0.1  # closed before the head could finish


def test_a_kept_alive_connection_gets_the_deadline_again(server):
    port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        client.settimeout(5)
        answer = b""
        while not answer.endswith(b"ok"):
            answer += client.recv(1024)
        assert answer.startswith(b"HTTP/1.1 200")
        client.sendall(b"GET / HTTP/1.1\r\nHo")  # half of a second head, then nothing
        assert closed_by_server(client)


def test_idle_connections_beyond_the_cap_make_room_for_an_honest_request(server):
    port, served = server
    settle(served)
    idle = [connect(port, f"127.0.2.{1 + i % 4}") for i in range(4 * CAP)]  # four other hosts
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert response.status_code == 200 and response.text == "ok"
        assert closed_by_server(idle[-1], wait_s=0.5)  # turned away: its address holds its share
        assert len(served.server_state.connections) <= CAP + 1
    finally:
        for sock in idle:
            sock.close()


@pytest.mark.parametrize("addresses", [1, 200], ids=["from one address", "from 200 addresses"])
def test_head_only_connections_claiming_nothing_cannot_lock_out_a_verified_request(server, addresses):
    """The hole of issue 24: connections that sent a head (`Content-Length: 1000`, no body) count as busy, so
    4 x the cap of them turned everyone away. Unverified, they now share a budget of their own."""
    port, served = server
    settle(served)
    flood = [
        connect(port, f"127.0.{2 + i % addresses // 250}.{1 + i % addresses % 250}", HEAD_ONLY) for i in range(4 * CAP)
    ]
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/verified", timeout=5)
        assert response.status_code == 200 and response.text == "ok"
        wait_until(lambda: len(served.server_state.connections) <= UNVERIFIED, what="the budget to hold")
        if addresses == 1:  # the per-address cap: its first few stay, the rest are turned away
            assert closed_by_server(flood[-1], wait_s=0.5) and not closed_by_server(flood[0], wait_s=0.2)
        else:  # newcomers from lighter addresses took the places of the oldest
            assert closed_by_server(flood[0], wait_s=0.5)
    finally:
        for sock in flood:
            sock.close()


def test_at_the_cap_with_every_connection_verified_and_busy_a_new_one_is_turned_away(server):
    port, served = server
    settle(served)
    busy = []
    try:
        for index in range(CAP):  # one by one: each proves itself before the next, as verified callers do
            busy.append(connect(port, f"127.0.3.{1 + index}", b"GET /hold-verified HTTP/1.1\r\nHost: x\r\n\r\n"))
            wait_until(lambda: len(served.server_state.tasks) == len(busy), what="the request to be in progress")
        with connect(port) as late:
            assert closed_by_server(late, wait_s=0.5)
        assert not closed_by_server(busy[0], wait_s=HEAD_TIMEOUT_S + 0.5)  # a verified request keeps its place
    finally:
        for sock in busy:
            sock.close()


@pytest.mark.parametrize("size", [17_000, 64_000])
def test_a_head_over_the_cap_is_refused_even_in_one_send(server, size):
    """h11 checks its 16 KiB cap only on a head still incomplete: one send of the whole head got through."""
    port, served = server
    settle(served)
    head = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * size + b"\r\n\r\n"
    with connect(port) as client:
        client.sendall(head)
        client.settimeout(5)
        answer = b""
        while chunk := client.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 431 ") and b'"error": "the request head is larger than 16384 bytes"' in answer
    small = httpx.get(f"http://127.0.0.1:{port}/", headers={"X-Big": "a" * 15_000}, timeout=5)
    assert small.status_code == 200


def test_a_head_with_bare_lf_line_endings_is_read_where_h11_ends_it_and_a_chunked_body_is_refused(server):
    """Issue 37: a head with LF-only line endings, in one send with its body, got a false 431 (the cap looked for
    CRLF CRLF only); chunked trailers of 17-64 KB got through (the cap covered only heads)."""
    port, served = server
    settle(served)

    def exchange(data: bytes) -> bytes:
        with connect(port, send=data) as client:
            client.settimeout(5)
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
                if answer.endswith(b"ok") or answer.endswith(b"}"):
                    break
        return answer

    body = b"x" * 20_000  # with the head in one send: over 16 KiB, the head itself small
    assert exchange(b"POST / HTTP/1.1\nHost: x\nContent-Length: 20000\n\n" + body).startswith(b"HTTP/1.1 200")
    trailers = b"".join(b"X-T%d: %s\r\n" % (i, b"a" * 100) for i in range(200))
    chunked = b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n" + trailers
    answer = exchange(chunked + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 411 ") and b"needs a Content-Length" in answer


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
    monkeypatch.setattr(connections.resource, "getrlimit", lambda _kind: (1024, limits["hard"]))
    monkeypatch.setattr(connections.resource, "setrlimit", lambda _kind, value: limits.update(set=value))
    limits["hard"] = 1024  # a cap of 512 leaves 384 files: four batches of 96
    assert ensure_fd_room(512) == 96 and limits.pop("set", None) is None  # the soft limit already fits
    limits["hard"] = 65536
    assert ensure_fd_room(512) == 1024 and limits["set"] == (512 + 4 * 1024 + 128, 65536)


def test_a_cap_above_the_hard_file_limit_is_one_line(monkeypatch):
    monkeypatch.setattr(connections.resource, "getrlimit", lambda _kind: (1024, 1024))
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
from audionet.lib.miner.connections import guarded_config, throttle_logs
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
