"""The connection guard on a real uvicorn server on loopback: head deadline, connection cap, log throttle."""

import asyncio
import logging
import socket
import threading
import time

import httpx
import pytest
import uvicorn

from audionet.lib import connections
from audionet.lib.connections import LogThrottle, ensure_fd_room, guarded_protocol
from audionet.lib.errors import ConfigError

pytestmark = pytest.mark.timeout(120)
HEAD_TIMEOUT_S = 1.0
CAP = 50


async def app(scope, receive, send):
    """Answers at once, or holds the request while /hold is asked for (a busy connection)."""
    if scope["type"] != "http":
        return
    if scope["path"] == "/hold":
        await asyncio.sleep(30)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture(scope="module")
def server():
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        http=guarded_protocol(HEAD_TIMEOUT_S, CAP),
        timeout_keep_alive=HEAD_TIMEOUT_S,
    )
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    while not served.started:
        time.sleep(0.05)
    yield served.servers[0].sockets[0].getsockname()[1], served
    served.should_exit = True
    thread.join(10)


def closed_by_server(sock: socket.socket, wait_s: float = 15.0) -> bool:
    sock.settimeout(wait_s)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


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
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(4 * CAP)]
    try:
        response = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert response.status_code == 200 and response.text == "ok"
        assert closed_by_server(idle[0], wait_s=0.5)  # the oldest were closed to make room
        assert len(served.server_state.connections) <= CAP + 1
    finally:
        for sock in idle:
            sock.close()


def test_at_the_cap_with_every_connection_busy_a_new_one_is_turned_away(server):
    port, _ = server
    time.sleep(HEAD_TIMEOUT_S + 0.5)  # let idle connections from other tests go
    busy = [socket.create_connection(("127.0.0.1", port)) for _ in range(CAP)]
    try:
        for sock in busy:
            sock.sendall(b"GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.5)
        with socket.create_connection(("127.0.0.1", port)) as late:
            assert closed_by_server(late, wait_s=0.5)
        assert not closed_by_server(busy[0], wait_s=HEAD_TIMEOUT_S + 0.5)  # a request in progress keeps its place
    finally:
        for sock in busy:
            sock.close()


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


def test_a_cap_above_the_hard_file_limit_is_one_line(monkeypatch):
    monkeypatch.setattr(connections.resource, "getrlimit", lambda _kind: (1024, 1024))
    with pytest.raises(ConfigError) as error:
        ensure_fd_room(5000)
    assert "--miner.max_connections 5000 needs 5128 open files; the limit is 1024" in str(error.value)
    assert "\n" not in str(error.value)
