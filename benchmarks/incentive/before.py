"""The way from answers to weights before issue 42 (`lib/validator/incentive.py` at d140347), kept here to
measure against: a 48-hour record and 30-minute recent answers that move the estimate only beyond 3 standard
errors, a reference at the 0.98 quantile of however many uids are eligible, a failed query a 0 like any other
answer, no new record for a new signed model, and weights published as soon as anybody earns anything."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from audionet.benchmarks.incentive.scorers import Layout
from audionet.lib.validator.record import PRIOR_ANSWERS, PRIOR_SD, clean, ratio

SUMS = ("total", "total_sq", "weight", "weight_sq", "recent", "recent_weight", "recent_weight_sq", "count")


@dataclass(frozen=True)
class Issue33(Layout):
    services: tuple[str, ...]
    one_mechanism: bool = True
    record_s: float = 48 * 3600.0
    recent_s: float = 1800.0
    change_z: float = 3.0
    eligible_after: int = 3
    floor: float = 0.78
    quantile: float = 0.98
    confidence_z: float = 0.5

    @property
    def label(self) -> str:
        return f"before: issue 33's curve (record 48 h, recent 0.5 h beyond 3 SE, q0.98); {self.where}"

    def start(self, shape) -> dict:
        return {name: np.zeros(shape) for name in SUMS}

    def tick(self, state: dict, seconds: float) -> None:
        long, short = np.exp(-seconds / self.record_s), np.exp(-seconds / self.recent_s)
        for name, factor in (("total", long), ("total_sq", long), ("weight", long), ("weight_sq", long**2)):
            state[name] *= factor
        for name, factor in (("recent", short), ("recent_weight", short), ("recent_weight_sq", short**2)):
            state[name] *= factor

    def observe(self, state: dict, index, reward, failed) -> None:
        reward = clean(reward)  # a failed query is a 0 like any other
        for name, value in (("total", reward), ("total_sq", reward**2), ("recent", reward)):
            state[name][index] += value
        for name in ("weight", "weight_sq", "recent_weight", "recent_weight_sq", "count"):
            state[name][index] += 1.0

    def forget(self, state: dict, uids) -> None:
        for array in state.values():
            array[..., uids] = 0.0

    def restart(self, state: dict, uids) -> None:
        return None  # no model identity

    def doubtful(self, state: dict, serving) -> np.ndarray:
        return np.zeros(state["count"].shape[::2], bool)  # every uid in turn: no doubt

    def publish(self, state: dict, validator: int, serving, scored) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows [service, uid], weights [mechanism, uid], published [mechanism]): every mechanism where anybody
        earned anything."""
        mine = {name: array[validator] for name, array in state.items()}
        mean = ratio(mine["total"], mine["weight"])
        answers = ratio(mine["weight"] ** 2, mine["weight_sq"])
        spread = np.maximum(ratio(mine["total_sq"], mine["weight"]) - mean**2, 0.0)
        variance = (spread * answers + PRIOR_SD**2 * PRIOR_ANSWERS) / (answers + PRIOR_ANSWERS)
        error = np.sqrt(variance * ratio(mine["weight_sq"], mine["weight"] ** 2))
        recent_error_sq = variance * ratio(mine["recent_weight_sq"], mine["recent_weight"] ** 2)
        band = self.change_z * np.sqrt(np.maximum(recent_error_sq - error**2, 0.0))
        change = np.where(mine["recent_weight"] > 0, ratio(mine["recent"], mine["recent_weight"]) - mean, 0.0)
        value = np.where(mine["weight"] > 0, mean + np.sign(change) * np.maximum(np.abs(change) - band, 0.0), 0.0)
        bound = value - self.confidence_z * error
        eligible = (mine["count"] >= self.eligible_after) & np.asarray(serving, bool)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row with no eligible uid has no reference
            reference = np.nanquantile(np.where(eligible, bound, np.nan), self.quantile, axis=-1, keepdims=True)
        relative = ratio(bound, np.broadcast_to(np.nan_to_num(reference, nan=0.0), bound.shape))
        raw = np.where(eligible, np.clip((relative - self.floor) / (1 - self.floor), 0, None), 0.0)
        rows = ratio(raw, raw.sum(axis=-1, keepdims=True)) * np.asarray(scored)[:, None]
        weights = _combine(rows) if self.one_mechanism else rows
        return rows, weights, weights.sum(axis=-1) > 0


def _combine(rows: np.ndarray) -> np.ndarray:
    """Every service on one mechanism, an even split; a service where nobody earned gives its share away."""
    paying = rows[rows.sum(axis=-1) > 0]
    return (paying.mean(axis=0) if len(paying) else np.zeros(rows.shape[-1]))[None, :]
