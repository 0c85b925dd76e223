"""Run concurrent requests that share a length bucket as one batch.

The miner calls a backend from several worker threads. The first request of
a bucket becomes the leader: it waits `window_s` (or until `max_batch`
requests have joined), then runs them all in one call and hands each caller
its own result. A bucket is a token count, so every request in a batch
generates the same number of steps and is trimmed to its own length after.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Job:
    item: Any
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


@dataclass
class _Group:
    jobs: list[_Job] = field(default_factory=list)
    full: threading.Event = field(default_factory=threading.Event)


class LengthBucketBatcher:
    """`submit(bucket, item)` -> `run_batch(bucket, items)[i]` for this caller's item."""

    def __init__(
        self, run_batch: Callable[[Hashable, Sequence[Any]], Sequence[Any]], window_s: float = 0.05, max_batch: int = 4
    ) -> None:
        self.run_batch, self.window_s, self.max_batch = run_batch, window_s, max(1, max_batch)
        self._open: dict[Hashable, _Group] = {}
        self._lock = threading.Lock()
        self.batch_sizes: list[int] = []  # every batch run, for benchmarks and tests

    def submit(self, bucket: Hashable, item: Any) -> Any:
        job = _Job(item)
        with self._lock:
            group = self._open.get(bucket)
            leader = group is None
            if leader:
                group = self._open[bucket] = _Group()
            group.jobs.append(job)
            if len(group.jobs) >= self.max_batch:
                self._open.pop(bucket, None)  # closed: later arrivals start a new group
                group.full.set()
        if not leader:
            job.done.wait()
        else:
            self._lead(bucket, group)
        if job.error is not None:
            raise job.error
        return job.result

    def _lead(self, bucket: Hashable, group: _Group) -> None:
        if self.max_batch > 1 and self.window_s > 0:
            group.full.wait(self.window_s)
        with self._lock:
            if self._open.get(bucket) is group:
                del self._open[bucket]
        jobs = list(group.jobs)
        self.batch_sizes.append(len(jobs))
        started = time.perf_counter()
        try:
            results = self.run_batch(bucket, [j.item for j in jobs])
            for job, result in zip(jobs, results, strict=True):
                job.result = result
        except BaseException as error:  # every waiter gets the failure, nobody hangs
            for job in jobs:
                job.error = error
        finally:
            self.last_batch_s = time.perf_counter() - started
            for job in jobs:
                job.done.set()
