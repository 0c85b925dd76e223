"""BLAS runs on one thread inside `one_blas_thread` and on as many as before after it; `on_every_core` keeps
the order of its items, runs them on its pool's threads and raises what they raise."""

import threading

import pytest
from threadpoolctl import threadpool_info

from audionet.lib.core.threads import on_every_core, one_blas_thread


def blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_blas_runs_on_one_thread_inside_the_block_and_as_before_after_it():
    import numpy as np

    np.ones((4, 4)) @ np.ones((4, 4))  # numpy's BLAS is loaded
    before = blas_threads()
    assert before, "no BLAS library found"
    with one_blas_thread():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before


def test_on_every_core_keeps_the_order_uses_the_pool_and_raises_the_first_error():
    names: set[str] = set()

    def square(n: int) -> int:
        names.add(threading.current_thread().name)
        return n * n

    assert on_every_core(square, range(64)) == [n * n for n in range(64)]
    assert names and all(name.startswith("cores") for name in names)

    def fails_on_three(n: int) -> int:
        if n == 3:
            raise ValueError("clip 3 is not audio")
        return n

    with pytest.raises(ValueError, match="clip 3"):
        on_every_core(fails_on_three, range(8))
