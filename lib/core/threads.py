"""Work that should run on one BLAS thread.

numpy's BLAS (OpenBLAS) splits even a small matrix product over every core, and its threads spin while they wait
for each other. On a validator whose cores are busy with evaluators, a product of a few megabytes then waits far
longer for its second thread than it works: the duplicate search took 20x its single-thread CPU time so, measured
on this 2-core machine under load (docs/benchmarks.md#validator-scale).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional

_CONTROLLER: Optional[Any] = None  # threadpoolctl's view of the loaded thread pools, built once (it scans libraries)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread inside the block (process-wide: for short work between heavier stages)."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    with _CONTROLLER.limit(limits=1, user_api="blas"):
        yield
