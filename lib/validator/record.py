"""The record of one service's answers per uid, in wall-clock time, that starts again when the answers change.

Each cell (a uid, or a validator's uid in the incentive study) holds time-weighted sums of its answers since its
record began: weights fall by e every `Memory.record_s`, and the sums divide by the weight they hold, so a
newcomer's estimate is the mean of what it has shown. Every answer is first compared with the record it joins
(its difference in standard errors of a prediction from the record: the answers' spread and the record mean's
own error), and two CUSUM statistics add it up, one for a drop and one for a rise:
S = max(0, S + z - change_k). Each keeps the answers since it was last 0. When one passes its threshold
(`drop_h`, `rise_h`), the record starts again from those answers: the change happened when the statistic began
to climb, and everything since is the new model's evidence. A drop may be told sooner than a rise is trusted: a
false drop only costs the miner, a rise that is believed too soon would pay a miner that alternates models. A steady miner's record stays whole (its statistics keep falling back to 0), so
its weight stays calm; a changed one is judged on its new answers alone, as a new hotkey would be.

A failed query counts as one answer of 0 when it begins a run of failures; further failures of the run add
nothing (the miner is down, and the curve pays nothing while its last query failed), so an outage costs what
declaring "not serving" costs, and failing selectively on hard requests still costs a 0 each time.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

PRIOR_SD = 0.2  # one answer's score noise assumed before a uid has shown its own (the measured range 0.10-0.22)
PRIOR_ANSWERS = 3.0  # how many answers that assumption is worth
Z_CAP = 4.0  # one answer moves a CUSUM statistic by at most this many standard errors (scores are bounded, skewed)
SUMS = ("total", "total_sq", "weight", "weight_sq", "count")  # the sums of a record and of each segment
DOUBT = 0.5  # a statistic past this share of its threshold: the validator asks that miner again sooner


@dataclass(frozen=True)
class Memory:
    """How long answers count, and how a change of model is told from noise."""

    record_s: float  # the record's weights fall by e in this time (seconds)
    drop_h: float  # the drop statistic past this many standard errors starts the record again
    rise_h: float  # and the rise statistic past this many
    change_k: float  # each answer's allowance, in standard errors: changes smaller than about 2k go through slowly


@dataclass
class Record:
    """Time-weighted sums of one service's answers; every field has the same shape, the uid last."""

    total: np.ndarray  # sum of weight x reward
    total_sq: np.ndarray  # sum of weight x reward^2
    weight: np.ndarray  # sum of weights
    weight_sq: np.ndarray  # sum of squared weights (the effective number of answers is weight^2 / weight_sq)
    count: np.ndarray  # answers in the record (eligibility)
    drop_total: np.ndarray  # the same sums over the answers since the drop statistic was last 0
    drop_total_sq: np.ndarray
    drop_weight: np.ndarray
    drop_weight_sq: np.ndarray
    drop_count: np.ndarray
    rise_total: np.ndarray  # ... and since the rise statistic was
    rise_total_sq: np.ndarray
    rise_weight: np.ndarray
    rise_weight_sq: np.ndarray
    rise_count: np.ndarray
    drop: np.ndarray  # CUSUM statistics, in standard errors
    rise: np.ndarray
    failing: np.ndarray  # 1 while the last query failed

    @classmethod
    def empty(cls, shape) -> Record:
        return cls(*(np.zeros(shape) for _ in fields(cls)))

    def decay(self, seconds: float, memory: Memory) -> None:
        """Let `seconds` of wall-clock time pass."""
        if seconds <= 0:
            return
        factor = np.exp(-seconds / memory.record_s)
        for prefix in ("", "drop_", "rise_"):
            for name, power in (("total", 1), ("total_sq", 1), ("weight", 1), ("weight_sq", 2)):
                getattr(self, prefix + name)[...] *= factor**power

    def add(self, index, reward, memory: Memory, failed=False) -> None:
        """One answer in each cell of `index` (a numpy index naming each cell once); rewards are clipped into
        0..1 (NaN and inf count as 0); `failed`: the query itself failed (no answer)."""
        where = np.unravel_index(np.arange(self.total.size).reshape(self.total.shape)[index].ravel(), self.total.shape)
        reward = np.broadcast_to(clean(reward), where[0].shape)
        failed = np.broadcast_to(np.asarray(failed, bool), where[0].shape)
        repeated = failed & (self.failing[where] > 0)  # a failure in a run already counted
        self.failing[where] = failed
        where, x = tuple(axis[~repeated] for axis in where), np.where(failed, 0.0, reward)[~repeated]
        cell = {f.name: getattr(self, f.name)[where] for f in fields(self) if f.name != "failing"}
        z = _surprise(cell, x)
        change = {}
        for side, sign in (("drop", -1.0), ("rise", 1.0)):
            before = cell[side]
            after = np.maximum(0.0, before + sign * z - memory.change_k)
            for name, value in _increments(x).items():
                kept = np.where(before > 0, cell[f"{side}_{name}"], 0.0)
                cell[f"{side}_{name}"] = np.where(after > 0, kept + value, 0.0)
            cell[side] = after
            change[side] = after > (memory.drop_h if side == "drop" else memory.rise_h)
        for name, value in _increments(x).items():
            cell[name] = cell[name] + value
        for side in ("rise", "drop"):  # a drop wins where both pass at once
            for name in SUMS:
                cell[name] = np.where(change[side], cell[f"{side}_{name}"], cell[name])
        restarted = change["drop"] | change["rise"]
        for name in ("drop", "rise", *(f"{side}_{name}" for side in ("drop", "rise") for name in SUMS)):
            cell[name] = np.where(restarted, 0.0, cell[name])
        for name, values in cell.items():
            getattr(self, name)[where] = values

    def doubtful(self, memory: Memory) -> np.ndarray:
        """Per cell: a change statistic is past half its threshold (the answers may have changed: worth asking
        again soon, to tell it from noise sooner)."""
        return (self.drop > DOUBT * memory.drop_h) | (self.rise > DOUBT * memory.rise_h)

    def take(self, index) -> Record:
        """The cells at `index` (a uid, or a list of them), as a new record."""
        return Record(*(np.array(getattr(self, f.name)[..., index]) for f in fields(self)))

    def put(self, index, other: Record) -> None:
        for f in fields(self):
            getattr(self, f.name)[..., index] = getattr(other, f.name)

    def as_lists(self) -> dict[str, list[float]]:
        return {f.name: [float(v) for v in getattr(self, f.name)] for f in fields(self)}

    @classmethod
    def from_lists(cls, data: dict, size: int) -> Record:
        """What `as_lists` wrote (fields missing from an older file start at 0)."""
        record = cls.empty(size)
        for f in fields(cls):
            values = [float(v) for v in data.get(f.name, [])][:size]
            getattr(record, f.name)[: len(values)] = values
        return record


def _increments(x: np.ndarray) -> dict[str, np.ndarray]:
    """What one answer of reward `x` adds to each sum (its weight is 1 when it arrives)."""
    one = np.ones_like(x)
    return {"total": x, "total_sq": x**2, "weight": one, "weight_sq": one, "count": one}


def _surprise(sums: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """How far each answer lies from the record before it, in standard errors of a prediction (0 where the
    record is empty)."""
    mean, variance, answers = _moments(sums["total"], sums["total_sq"], sums["weight"], sums["weight_sq"])
    scale = np.sqrt(variance * (1.0 + ratio(np.ones_like(answers), answers)))
    z = np.clip(ratio(x - mean, scale), -Z_CAP, Z_CAP)
    return np.where(sums["weight"] > 0, z, 0.0)


def _moments(total, total_sq, weight, weight_sq):
    """(mean, one answer's variance pooled with the prior, effective number of answers) of time-weighted sums."""
    mean = ratio(total, weight)
    answers = ratio(weight**2, weight_sq)
    spread = np.maximum(ratio(total_sq, weight) - mean**2, 0.0)
    variance = (spread * answers + PRIOR_SD**2 * PRIOR_ANSWERS) / (answers + PRIOR_ANSWERS)
    return mean, variance, answers


def clean(reward) -> np.ndarray:
    """Rewards clipped into 0..1; NaN and +-inf count as 0."""
    return np.clip(np.nan_to_num(np.asarray(reward, float), nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)


def ratio(a, b) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


@dataclass(frozen=True)
class Estimate:
    value: np.ndarray  # the estimated mean reward
    error: np.ndarray  # its standard error
    answers: np.ndarray  # answers in the record


def estimate(record: Record) -> Estimate:
    """The record's mean and its standard error."""
    mean, variance, answers = _moments(record.total, record.total_sq, record.weight, record.weight_sq)
    error = np.sqrt(variance * ratio(np.ones_like(answers), answers))
    return Estimate(np.where(record.weight > 0, mean, 0.0), error, record.count)
