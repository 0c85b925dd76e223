"""Run statistics as in seed 004: warm-up runs are never passed in here;
outliers are runs whose modified z-score exceeds 3.5 (Iglewicz & Hoaglin:
0.6745 * (x - median) / MAD, or (x - median) / (1.253314 * mean absolute
deviation) when MAD is 0); they are counted and left out of the mean and
its 95% confidence interval (Student t), while the raw runs are kept."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as scipy_stats

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
