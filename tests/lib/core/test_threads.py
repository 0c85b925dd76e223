"""BLAS runs on one thread inside `one_blas_thread` and on as many as before after it."""

from threadpoolctl import threadpool_info

from audionet.lib.core.threads import one_blas_thread


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
