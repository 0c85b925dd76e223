"""The attackers of issue 37, each a thread that runs until stopped, from source addresses spread over
127.0.0.0/8 (all of it is loopback on Linux) that stand for other hosts:

* `SocketCrowd`: connections that send what `payload(index)` says and then hold on (refilled when closed),
  e.g. a verified low-stake validator's refused request followed by a voice-clone head whose body never comes
  (hole 1), or one partial head per address (hole 3), or a pipelined unsigned /v1/health flood (hole 6);
* `Churn`: new connections from fresh addresses at a fixed rate, each sending nothing (hole 4);
* `Streams`: signed requests sent back to back over `streams` connections (hole 2: texts the length check
  refuses).

Each counts the statuses it got back (every answer, by its status line).
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable

import httpx

from audionet.lib.core.auth import sign_request


def address(block: int, index: int) -> str:
    """The `index`-th loopback address of a block (127.<block>.x.y), none ending in 0 or 255."""
    return f"127.{block}.{index // 254 % 254}.{1 + index % 254}"


def statuses_in(data: bytes) -> list[str]:
    return [part[:3].decode(errors="replace") for part in data.split(b"HTTP/1.1 ")[1:]]


class SocketCrowd(threading.Thread):
    """`count` connections from `addresses` addresses of `block`, each sending `payload(index)` once connected
    (and again whenever answered, when `again`), reopened as soon as one closes."""

    def __init__(self, port: int, count: int, addresses: int, block: int, payload: Callable[[int], bytes], again=False):
        super().__init__(daemon=True)
        self.port, self.count, self.addresses, self.block = port, count, addresses, block
        self.payload, self.again = payload, again
        self.stopping = threading.Event()
        self.opened, self.sent, self.statuses = 0, 0, Counter()
        self.selector = selectors.DefaultSelector()

    def in_place(self) -> bool:
        """Every connection has connected and sent its payload once: the crowd is all there."""
        return self.sent >= self.count

    def _open(self) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        index = self.opened
        try:
            sock.bind((address(self.block, index % self.addresses), 0))
            sock.connect_ex(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            return
        self.opened += 1
        self.selector.register(sock, selectors.EVENT_WRITE, index)

    def _drop(self, sock: socket.socket) -> None:
        self.selector.unregister(sock)
        sock.close()
        if not self.stopping.is_set():
            self._open()

    def run(self) -> None:
        for _ in range(self.count):
            self._open()
        while not self.stopping.is_set():
            for key, events in self.selector.select(timeout=0.1):
                sock = key.fileobj
                try:
                    if events & selectors.EVENT_WRITE:
                        sock.send(self.payload(key.data))
                        self.sent += 1
                        self.selector.modify(sock, selectors.EVENT_READ, key.data)
                    elif data := sock.recv(65536):
                        self.statuses.update(statuses_in(data))
                        if self.again:
                            sock.send(self.payload(key.data))
                    else:
                        self._drop(sock)
                except OSError:
                    self._drop(sock)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()

    def stop(self) -> dict:
        self.stopping.set()
        self.join(15)
        return {"connections": self.count, "opened": self.opened, "statuses": dict(self.statuses)}


class Churn(threading.Thread):
    """`rate` new connections a second, each from the next fresh address of blocks 10 and up, sending nothing;
    each is closed when the miner closes it, or after `hold_s`."""

    def __init__(self, port: int, rate: float, hold_s: float = 5.0):
        super().__init__(daemon=True)
        self.port, self.rate, self.hold_s = port, rate, hold_s
        self.stopping = threading.Event()
        self.opened = self.turned_away = 0
        self.selector = selectors.DefaultSelector()

    def in_place(self) -> bool:
        """A second's worth of fresh connections has been opened."""
        return self.opened >= self.rate

    def run(self) -> None:
        started, held = time.monotonic(), {}
        while not self.stopping.is_set():
            due = int((time.monotonic() - started) * self.rate)
            while self.opened < due:
                sock = socket.socket()
                sock.setblocking(False)
                try:
                    sock.bind((address(10 + self.opened // 64516, self.opened), 0))
                    sock.connect_ex(("127.0.0.1", self.port))
                except OSError:
                    sock.close()
                    break
                self.opened += 1
                self.selector.register(sock, selectors.EVENT_READ)
                held[sock] = time.monotonic()
            for key, _events in self.selector.select(timeout=0.005):
                try:
                    gone = not key.fileobj.recv(1024)
                except OSError:
                    gone = True
                if gone:
                    self.turned_away += time.monotonic() - held[key.fileobj] < 0.5
                    self._close(key.fileobj, held)
            now = time.monotonic()
            for sock in [s for s, at in held.items() if now - at > self.hold_s]:
                self._close(sock, held)
        for sock in list(held):
            self._close(sock, held)
        self.selector.close()

    def _close(self, sock: socket.socket, held: dict) -> None:
        self.selector.unregister(sock)
        held.pop(sock, None)
        sock.close()

    def stop(self) -> dict:
        self.stopping.set()
        self.join(15)
        return {"rate_per_s": self.rate, "opened": self.opened, "closed_within_0.5_s": self.turned_away}


class Streams(threading.Thread):
    """`streams` threads each sending signed requests made by `body(n)` to `path` back to back, from loopback
    addresses of block 6."""

    def __init__(self, url: str, wallet, miner_hotkey: str, path: str, body: Callable[[int], bytes], streams=2):
        super().__init__(daemon=True)
        self.url, self.wallet, self.miner_hotkey, self.path, self.body = url, wallet, miner_hotkey, path, body
        self.streams = streams
        self.stopping = threading.Event()
        self.statuses: Counter = Counter()
        self.sent = 0
        self.lock = threading.Lock()
        self.seconds = 0.0

    def in_place(self) -> bool:
        """Every stream has had an answer: each is sending back to back."""
        with self.lock:
            return sum(self.statuses.values()) >= self.streams

    def _one(self, index: int) -> None:
        transport = httpx.HTTPTransport(local_address=address(6, index))
        with httpx.Client(base_url=self.url, transport=transport, timeout=30) as client:
            while not self.stopping.is_set():
                with self.lock:
                    number = self.sent
                    self.sent += 1
                body = self.body(number)
                try:
                    headers = sign_request(self.wallet, self.path, body, self.miner_hotkey)
                    status = str(client.post(self.path, content=body, headers=headers).status_code)
                except httpx.HTTPError as error:
                    status = type(error).__name__
                with self.lock:
                    self.statuses[status] += 1

    def run(self) -> None:
        started = time.monotonic()
        workers = [threading.Thread(target=self._one, args=(i,), daemon=True) for i in range(self.streams)]
        for worker in workers:
            worker.start()
        self.stopping.wait()
        for worker in workers:
            worker.join(30)
        self.seconds = time.monotonic() - started

    def stop(self) -> dict:
        self.stopping.set()
        self.join(60)
        total = sum(self.statuses.values())
        return {
            "streams": self.streams,
            "requests": total,
            "per_s": total / self.seconds if self.seconds else None,
            "statuses": dict(self.statuses),
        }
