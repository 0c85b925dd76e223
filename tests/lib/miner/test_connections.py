"""The connection guard on a real uvicorn server on loopback: head deadline, the budget for unverified
connections, the per-address cap, the connection cap, the header cap however the head arrives. (Who gives way
to whom, and places by stake: test_guard.py; the log throttle and the open-file room: test_server.py.)"""

import socket
import threading
import time

import httpx
import pytest
import uvicorn

from audionet.lib.miner.connections import VERIFIED_EXTENSION
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.limits import GuardSettings
from audionet.lib.miner.server import guarded_config
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
