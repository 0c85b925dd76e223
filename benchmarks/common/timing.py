"""The one timing helper of the benchmarks: warm-up calls left out, each measured call timed between CUDA
synchronisations (`lib.core.timing.cuda_synchronize`: on a GPU a call that only queued kernels has not finished),
and the run statistics of docs/methodology.md#multi-gpu-scaling-statistics: outliers are runs whose modified z-score exceeds 3.5 (Iglewicz &
Hoaglin: 0.6745 (x - median) / MAD, or (x - median) / (1.253314 x mean absolute deviation) when the MAD is
0); they are counted and left out of the mean and its 95 % confidence interval (Student t), while the raw
runs are kept.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

import numpy as np
from scipy import stats as scipy_stats

from audionet.lib.core.timing import cuda_synchronize

OUTLIER_Z = 3.5
CONFIDENCE = 0.95


def modified_z_scores(values: Sequence[float]) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return x
    median = np.median(x)
    mad = np.median(np.abs(x - median))
    if mad == 0:  # half the runs or more identical: the mean-absolute-deviation form instead
        mean_ad = np.mean(np.abs(x - median))
        return np.zeros_like(x) if mean_ad == 0 else (x - median) / (1.253314 * mean_ad)
    return 0.6745 * (x - median) / mad


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """Half-width of the two-sided t confidence interval of the mean (0 with fewer than 2 values)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return 0.0
    sem = float(np.std(x, ddof=1)) / math.sqrt(x.size)
    return float(scipy_stats.t.ppf((1 + confidence) / 2, x.size - 1)) * sem


@dataclass(frozen=True)
class RunStats:
    n: int  # runs measured (warm-up excluded)
    outliers: int  # runs with |modified z| > 3.5, left out of mean and CI
    mean: float
    ci95: float  # mean ± ci95
    median: float
    min: float
    max: float
    std: float

    def as_dict(self) -> dict:
        return asdict(self)


def summarise(values: Sequence[float], drop_outliers: bool = True) -> RunStats:
    """`drop_outliers=False` where a far-off run is the thing measured, not noise (the pool study: a
    round-robin request that lands on the slow device)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return RunStats(0, 0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    keep = x[np.abs(modified_z_scores(x)) <= OUTLIER_Z] if drop_outliers else x
    return RunStats(
        n=int(x.size),
        outliers=int(x.size - keep.size),
        mean=float(keep.mean()),
        ci95=t_interval(keep),
        median=float(np.median(x)),
        min=float(x.min()),
        max=float(x.max()),
        std=float(keep.std(ddof=1)) if keep.size > 1 else 0.0,
    )


@dataclass
class CallTimes:
    """What `timed_calls` measured: seconds and result of each measured call, and the warm-ups' seconds."""

    seconds: list[float] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    warmup_s: list[float] = field(default_factory=list)

    @property
    def stats(self) -> RunStats:
        return summarise(self.seconds)


def timed_calls(
    call: Callable[[int], Any],
    *,
    runs: int,
    warmup: int = 0,
    device: Optional[str] = None,
    clock: Callable[[], float] = time.perf_counter,
    tick: Callable[[], None] = lambda: None,
) -> CallTimes:
    """`warmup` calls of `call(0)` (timed apart, never in the statistics), then `call(i)` for each of `runs`
    measured calls, each between CUDA synchronisations of `device`. `clock`: time.process_time to count CPU
    time instead of wall time; `tick` after every call (a progress bar)."""
    timed = CallTimes()
    for _ in range(warmup):
        started = clock()
        call(0)
        timed.warmup_s.append(clock() - started)
        tick()
    for index in range(runs):
        cuda_synchronize(device)  # earlier queued work is not this call's
        started = clock()
        timed.results.append(call(index))
        cuda_synchronize(device)  # the call's own queued work is
        timed.seconds.append(clock() - started)
        tick()
    return timed
