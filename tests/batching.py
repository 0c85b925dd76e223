"""Requests sent to a batching backend at once, as concurrent validators would send them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


def together(batcher, calls: Sequence[Callable[[], object]], window_s: float = 0.5) -> tuple[list, list[int]]:
    """Runs `calls` on threads at once while `batcher` gathers for `window_s`: (each call's result, the sizes
    of the batches they formed)."""
    before, out = len(batcher.batch_sizes), [None] * len(calls)
    batcher.window_s = window_s
    threads = [
        threading.Thread(target=lambda i=i, call=call: out.__setitem__(i, call())) for i, call in enumerate(calls)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        batcher.window_s = 0.0
    return out, batcher.batch_sizes[before:]
