"""From answers to weights, one service at a time: the record of each uid's answers, and the curve.

Pure, vectorised functions over arrays whose last axis is the uid (the validator passes one service's
row; the incentive study, `benchmarks/incentive/`, passes every validator's at once). Their constants were
chosen by that study from measured score samples (docs/scoring.md#from-scores-to-weights).

The record (`Record`), per uid and service, in wall-clock time:
- every answer's reward enters two time-weighted means: the record, whose weights fall by e every
  `Memory.record_s` seconds, and the recent answers, every `Memory.recent_s`; both divide by the weight they
  hold, so a newcomer's estimate is the mean of what it has shown, not that mean pulled towards 0;
- the estimate is the record, moved towards the recent answers by as much as they differ from it beyond
  `change_z` standard errors: a long record keeps a steady miner's weight calm, and a miner whose recent
  answers got worse (or better) shows it within the recent memory instead of the record's;
- its standard error is the answers' spread (pooled with a prior spread while there are few answers) over the
  square root of the effective number of answers the record holds.

The curve (`Curve`), per service:
1. A uid earns nothing before `eligible_after` scored answers in that service.
2. Each uid is judged by a lower confidence bound, the estimate minus `confidence_z` standard errors: a young
   uid counts by its uncertainty, so a lucky few answers neither earn much nor set the reference.
3. The reference is the `reference_quantile` quantile of the eligible uids' bounds: no single uid sets it
   (on a subnet of 256 uids it is the fifth best), and flooding the subnet with cheap uids does not lower it.
4. Relative quality r = bound / reference. Weight = ((r - floor) / (1 - floor)) ^ power above the floor, 0 at
   and below it, rising on above the reference (a better newcomer earns more without rescaling the others);
   L1-normalised over the uids. All zeros when nobody earned anything (the caller then sets no weights).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace

import numpy as np

PRIOR_SD = 0.2  # one answer's score noise assumed before a uid has shown its own (the measured range 0.10-0.22)
PRIOR_ANSWERS = 3.0  # how many answers that assumption is worth


@dataclass(frozen=True)
class Memory:
    """How long answers count, in seconds of wall-clock time."""

    record_s: float  # the record's weights fall by e in this time
    recent_s: float  # the recent answers' weights fall by e in this time
    change_z: float  # recent answers move the estimate by what they differ from the record beyond this many SEs


@dataclass
class Record:
    """Time-weighted sums of one service's rewards; every field has the same shape, the uid last."""

    total: np.ndarray  # sum of weight x reward
    total_sq: np.ndarray  # sum of weight x reward^2
    weight: np.ndarray  # sum of weights
    weight_sq: np.ndarray  # sum of squared weights (the effective number of answers is weight^2 / weight_sq)
    recent: np.ndarray
    recent_weight: np.ndarray
    recent_weight_sq: np.ndarray
    count: np.ndarray  # answers scored, never forgotten (eligibility)

    @classmethod
    def empty(cls, shape) -> Record:
        return cls(*(np.zeros(shape) for _ in fields(cls)))

    def decay(self, seconds: float, memory: Memory) -> None:
        """Let `seconds` of wall-clock time pass."""
        if seconds <= 0:
            return
        long, short = np.exp(-seconds / memory.record_s), np.exp(-seconds / memory.recent_s)
        for array, factor in (
            (self.total, long),
            (self.total_sq, long),
            (self.weight, long),
            (self.weight_sq, long**2),
            (self.recent, short),
            (self.recent_weight, short),
            (self.recent_weight_sq, short**2),
        ):
            array *= factor

    def add(self, index, reward) -> None:
        """One answer in each cell of `index` (a numpy index naming each cell once); rewards are clipped into
        0..1 (NaN and inf count as 0)."""
        reward = clean(reward)
        self.total[index] += reward
        self.total_sq[index] += reward**2
        self.recent[index] += reward
        for array in (self.weight, self.weight_sq, self.recent_weight, self.recent_weight_sq, self.count):
            array[index] += 1.0

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
        record = cls.empty(size)
        for f in fields(cls):
            values = [float(v) for v in data.get(f.name, [])][:size]
            getattr(record, f.name)[: len(values)] = values
        return record


def clean(reward) -> np.ndarray:
    """Rewards clipped into 0..1; NaN and +-inf count as 0."""
    return np.clip(np.nan_to_num(np.asarray(reward, float), nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


@dataclass(frozen=True)
class Estimate:
    value: np.ndarray  # the estimated mean reward
    error: np.ndarray  # its standard error
    answers: np.ndarray  # answers scored


def estimate(record: Record, memory: Memory) -> Estimate:
    mean = _ratio(record.total, record.weight)
    answers = _ratio(record.weight**2, record.weight_sq)  # effective number of answers in the record
    spread = np.maximum(_ratio(record.total_sq, record.weight) - mean**2, 0.0)
    variance = (spread * answers + PRIOR_SD**2 * PRIOR_ANSWERS) / (answers + PRIOR_ANSWERS)
    error = np.sqrt(variance * _ratio(record.weight_sq, record.weight**2))
    recent_error_sq = variance * _ratio(record.recent_weight_sq, record.recent_weight**2)
    # The recent answers are part of the record: their difference has about the variance of the recent
    # mean less the record's.
    band = memory.change_z * np.sqrt(np.maximum(recent_error_sq - error**2, 0.0))
    change = np.where(record.recent_weight > 0, _ratio(record.recent, record.recent_weight) - mean, 0.0)
    moved = mean + np.sign(change) * np.maximum(np.abs(change) - band, 0.0)
    return Estimate(np.where(record.weight > 0, moved, 0.0), error, record.count)


@dataclass(frozen=True)
class Curve:
    memory: Memory
    eligible_after: int  # scored answers in a service before a uid can earn in it
    floor: float  # relative quality at and below which a uid earns 0
    power: float  # steepness above the floor (1: proportional to the distance above it)
    reference_quantile: float  # the eligible uids' quantile that relative quality is measured against
    confidence_z: float  # a uid is judged by its estimate minus this many standard errors

    def bounds(self, record: Record) -> tuple[np.ndarray, np.ndarray]:
        """(lower confidence bound, eligible) per cell."""
        found = estimate(record, self.memory)
        return found.value - self.confidence_z * found.error, found.answers >= self.eligible_after

    def relative(self, record: Record, serving=None) -> tuple[np.ndarray, np.ndarray]:
        """(relative quality, eligible) per cell; `serving`: where the uid serves this service (default all)."""
        bound, eligible = self.bounds(record)
        if serving is not None:
            eligible = eligible & np.asarray(serving, bool)
        known = np.where(eligible, bound, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row with no eligible uid simply has no reference
            reference = np.nanquantile(known, self.reference_quantile, axis=-1, keepdims=True)
        reference = np.nan_to_num(reference, nan=0.0)
        return _ratio(bound, np.broadcast_to(reference, bound.shape)), eligible

    def shape(self, relative: np.ndarray) -> np.ndarray:
        above = np.clip((relative - self.floor) / (1.0 - self.floor), 0.0, None)
        return above**self.power

    def weights(self, record: Record, serving=None) -> np.ndarray:
        """L1-normalised weights per uid (last axis); all zeros where nobody earned anything."""
        relative, eligible = self.relative(record, serving)
        raw = np.where(eligible, self.shape(relative), 0.0)
        total = raw.sum(axis=-1, keepdims=True)
        return _ratio(raw, np.broadcast_to(total, raw.shape))

    def with_memory(self, **changes) -> Curve:
        return replace(self, memory=replace(self.memory, **changes))


HOUR = 3600.0
# Chosen by `audionet-bench incentive` (benchmarks/results/cpu-x86_64-2core/incentive-offline.md).
CURVE = Curve(
    memory=Memory(record_s=48 * HOUR, recent_s=0.5 * HOUR, change_z=3.0),
    eligible_after=3,
    floor=0.78,
    power=1.0,
    reference_quantile=0.98,
    confidence_z=0.5,
)
