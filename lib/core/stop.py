"""Stopping work nobody waits for any more.

Each generation runs under a `Stop` that the miner's scheduler sets when the caller leaves or the service's
timeout passes. The worker thread that runs the request sees it through `current()`; a backend that can stop
part-way looks at it (espeak-ng's audio callback, onnxruntime's terminate flag) and raises `Stopped`. A backend
that cannot stop finishes its call; its slot frees when it returns.

A `Stop` also carries the request's audio budget (`max_audio_s`, the service's answer limit): a backend that
makes audio piece by piece reports it (`produced`) and is stopped with a 400 once past it, so text that speaks
longer than the limit costs at most one piece past it, not the whole of it.

    stop = Stop()
    with running_under(stop):           # in the worker thread
        audio = backend.synthesize(...)  # may raise Stopped once stop.set() was called elsewhere
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Optional

from audionet.lib.core.errors import WireError


class Stopped(Exception):
    """The work was stopped: its caller left or its time ran out."""


class Stop:
    """A thread-safe signal with hooks run once when it is set (e.g. onnxruntime's terminate flag), and the
    request's audio budget."""

    def __init__(self, max_audio_s: Optional[float] = None) -> None:
        self._set = threading.Event()
        self._lock = threading.Lock()
        self._hooks: dict[int, Callable[[], None]] = {}
        self._keys = iter(range(2**62))
        self.reason = ""
        self.max_audio_s = max_audio_s
        self.produced_s = 0.0

    def produced(self, seconds: float) -> None:
        """Count `seconds` more audio made for this request; past `max_audio_s`, WireError 400 (`spent`: the
        work was done): the text speaks longer than the service allows."""
        with self._lock:
            self.produced_s += seconds
            total = self.produced_s
        if self.max_audio_s is not None and total > self.max_audio_s:
            raise past_budget(total, self.max_audio_s)

    def new_take(self) -> None:
        """A backend that makes several candidate answers (and keeps one) counts each from 0."""
        with self._lock:
            self.produced_s = 0.0

    def set(self, reason: str = "stopped") -> None:
        with self._lock:
            if self._set.is_set():
                return
            self.reason = reason
            self._set.set()
            hooks = list(self._hooks.values())
        for hook in hooks:
            hook()

    def is_set(self) -> bool:
        return self._set.is_set()

    def check(self) -> None:
        if self._set.is_set():
            raise Stopped(self.reason)

    @contextmanager
    def on_stop(self, hook: Callable[[], None]) -> Iterator[None]:
        """Run `hook` if the signal is set while inside the block (at once if it already is)."""
        with self._lock:
            key = next(self._keys)
            self._hooks[key] = hook
            already = self._set.is_set()
        if already:
            hook()
        try:
            yield
        finally:
            with self._lock:
                self._hooks.pop(key, None)


_local = threading.local()


def current() -> Optional[Stop]:
    """The `Stop` of the request this thread is running, if any."""
    return getattr(_local, "stop", None)


@contextmanager
def running_under(stop: Stop) -> Iterator[Stop]:
    _local.stop = stop
    try:
        yield stop
    finally:
        _local.stop = None


def past_budget(seconds: float, budget_s: float) -> WireError:
    return WireError(
        f"the text speaks for more than {seconds:.1f} s; the answer may be at most {budget_s:g} s", spent=True
    )


def audio_budget() -> Optional[float]:
    """The audio seconds the request this thread runs may produce (None: unbounded, or no request)."""
    stop = current()
    return None if stop is None else stop.max_audio_s


def new_take() -> None:
    """`Stop.new_take` for the request this thread runs, if any."""
    stop = current()
    if stop is not None:
        stop.new_take()


def check() -> None:
    """Raise `Stopped` if the request this thread runs has been stopped."""
    stop = current()
    if stop is not None:
        stop.check()
