"""Work that should run on one BLAS thread, and per-clip analyses that should run on every core.

numpy's BLAS (OpenBLAS) splits even a small matrix product over every core, and its threads spin while they wait
for each other. On a validator whose cores are busy with evaluators, a product of a few megabytes then waits far
longer for its second thread than it works: the duplicate search took 20x its single-thread CPU time so, measured
on this 2-core machine under load (docs/benchmarks.md#validator-scale).

The other way round, a C extension that releases the GIL (WORLD's F0 analysis) runs one clip per core: on the
first H200 call the voice-clone Judge spent 0.140 of its 0.304 s per clip in WORLD on one core.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Optional, TypeVar

_CONTROLLER: Optional[Any] = None  # threadpoolctl's view of the loaded thread pools, built once (it scans libraries)
_CORES: Optional[ThreadPoolExecutor] = None
_CORES_LOCK = threading.Lock()
T, R = TypeVar("T"), TypeVar("R")


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (process-wide: for short work between heavier stages)."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield


def on_every_core(function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`function` of each item, in order, on a process-wide pool of one thread per core (`os.cpu_count`). Only for work
    that releases the GIL; the first exception raised is raised here."""
    global _CORES
    with _CORES_LOCK:
        if _CORES is None:
            _CORES = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="cores")
    return list(_CORES.map(function, items))
