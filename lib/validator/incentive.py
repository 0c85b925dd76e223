"""From answers to weights, one service at a time: the record of each uid's answers, and the curve.

Pure, vectorised functions over arrays whose last axis is the uid (the validator passes one service's
row; the incentive study, `benchmarks/incentive/`, passes every validator's at once). Their constants were
chosen by that study from measured score samples (docs/scoring.md#from-scores-to-weights).

The record (`Record`, in `record.py`), per uid and service, belongs to one model: it starts again with a new
hotkey, a new signed model, or when the answers show a change their noise cannot explain (a two-sided CUSUM in
standard errors), and then holds only the answers since the change. Its estimate is the time-weighted mean of
its answers; its standard error the answers' spread (pooled with a prior spread while there are few) over the
square root of the effective number of answers. A failed query counts once per run of failures, as a 0, and
a uid earns nothing while its last query failed.

The curve (`Curve`), per service:
1. A uid earns nothing before `eligible_after` answers in its record, nor while its last query failed.
2. Each uid is judged by a lower confidence bound, the estimate minus `confidence_z` standard errors: a young
   record counts by its uncertainty, so a lucky few answers neither earn much nor set the reference.
3. The reference is the `reference_count`-th highest bound among the eligible uids that serve the service and
   stand near the top (at least `floor` of the second best; the highest while fewer are): no single uid sets
   it, it does not move with how many uids serve (cheap uids flooding a service are not among the best), and a
   gated uid that happens to be the fifth of five does not become the measure of the others.
4. Relative quality r = bound / reference. Weight = ((r - floor) / (1 - floor)) ^ power above the floor, 0 at
   and below it, rising on above the reference (a better newcomer earns more without rescaling the others);
   L1-normalised over the uids. All zeros when nobody earned anything (the caller then sets no weights).
5. A validator publishes a service's weights only once its evidence supports them (`ready`): the typical
   serving uid's standard error within `ready_error` of the reference. A validator that lost its state, or
   began scoring a service, holds its last weights there until then (at 3 %, its weights agree with the
   others' as closely as after a full record: the study measured a trust of 0.895 at 4 %).
6. A uid whose own record does not yet support its weight (`unsettled`: a new hotkey, a new signed model, a
   record started again on a change) is asked first, with the ones whose answers may have changed, up to half
   a round: a better newcomer is weighted within minutes, not after a pass over the subnet.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from audionet.lib.validator.record import Memory, Record, estimate, ratio


@dataclass(frozen=True)
class Curve:
    memory: Memory
    eligible_after: int  # answers in a uid's record before it can earn in a service
    floor: float  # relative quality at and below which a uid earns 0
    power: float  # steepness above the floor (1: proportional to the distance above it)
    reference_count: int  # relative quality is measured against the eligible bound this far from the top
    confidence_z: float  # a uid is judged by its estimate minus this many standard errors
    ready_error: (
        float  # weights are published once the median serving uid's error is within this share of the reference
    )

    def bounds(self, record: Record, serving=None) -> tuple[np.ndarray, np.ndarray]:
        """(lower confidence bound, eligible) per cell; `serving`: where the uid serves this service (default all)."""
        found = estimate(record)
        eligible = (found.answers >= self.eligible_after) & (record.failing == 0)
        if serving is not None:
            eligible = eligible & np.asarray(serving, bool)
        return found.value - self.confidence_z * found.error, eligible

    def reference(self, bound: np.ndarray, eligible: np.ndarray) -> np.ndarray:
        """Per row (keeping the uid axis): the `reference_count`-th highest bound among the eligible uids near the
        top (at least `floor` of the second best), the highest where fewer are near; 0 where none is eligible. No
        single uid moves it, nor do uids below it however many they are, and a poor fifth in a thinly served
        service (a gated uid among five) does not pay everything above it."""
        near = eligible & (bound >= self.floor * _highest(bound, eligible, 2))
        return _highest(bound, near, self.reference_count)

    def relative(self, record: Record, serving=None) -> tuple[np.ndarray, np.ndarray]:
        """(relative quality, eligible) per cell."""
        bound, eligible = self.bounds(record, serving)
        reference = self.reference(bound, eligible)
        return ratio(bound, np.broadcast_to(reference, bound.shape)), eligible

    def shape(self, relative: np.ndarray) -> np.ndarray:
        above = np.clip((relative - self.floor) / (1.0 - self.floor), 0.0, None)
        return above**self.power

    def weights(self, record: Record, serving=None) -> np.ndarray:
        """L1-normalised weights per uid (last axis); all zeros where nobody earned anything."""
        relative, eligible = self.relative(record, serving)
        raw = np.where(eligible, self.shape(relative), 0.0)
        total = raw.sum(axis=-1, keepdims=True)
        return ratio(raw, np.broadcast_to(total, raw.shape))

    def typical_error(self, record: Record, serving=None) -> np.ndarray:
        """Per row: the median, over the uids serving it, of the standard error relative to the reference (a uid
        not yet eligible counts as unknown: infinite); inf where nobody serves or nothing is known."""
        error, _ = self._relative_errors(record, serving)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a row nobody serves has no median
            typical = np.nanmedian(np.where(_serves(serving, error.shape), error, np.nan), axis=-1)
        return np.where(np.isnan(typical), np.inf, typical)

    def unsettled(self, record: Record, serving=None) -> np.ndarray:
        """Per cell: a uid serving the service whose own record does not yet support its weight (fewer than
        `eligible_after` answers, or a standard error above `ready_error` of the reference: a new hotkey, a new
        signed model, a record started again on a change). The validator asks these first, with the ones it
        doubts, so a newcomer or a changed miner is judged on its new answers within minutes."""
        error, reference = self._relative_errors(record, serving)
        return (error > self.ready_error) & _serves(serving, error.shape) & (reference > 0)

    def _relative_errors(self, record: Record, serving=None) -> tuple[np.ndarray, np.ndarray]:
        """(per cell the standard error relative to the reference, infinite for a uid with fewer than
        `eligible_after` answers or where the reference is 0; the reference per cell)."""
        found = estimate(record)
        bound, eligible = self.bounds(record, serving)
        reference = np.broadcast_to(self.reference(bound, eligible), bound.shape)
        known = (found.answers >= self.eligible_after) & (reference > 0)
        return np.where(known, ratio(found.error, reference), np.inf), reference

    def ready(self, record: Record, serving=None) -> np.ndarray:
        """Per row: whether this validator's evidence supports publishing the row's weights."""
        return self.typical_error(record, serving) <= self.ready_error

    def with_memory(self, **changes) -> Curve:
        return replace(self, memory=replace(self.memory, **changes))


HOUR = 3600.0


# Chosen by `audionet-bench incentive` (benchmarks/results/cpu-x86_64-2core/incentive-offline.md).
def _serves(serving, shape: tuple[int, ...]) -> np.ndarray:
    """Where a uid serves the service, over `shape` (every cell where `serving` is None)."""
    return np.ones(shape, bool) if serving is None else np.broadcast_to(np.asarray(serving, bool), shape)


def _highest(bound: np.ndarray, eligible: np.ndarray, place: int) -> np.ndarray:
    """Per row (keeping the uid axis): the `place`-th highest eligible bound, the highest where fewer are
    eligible, 0 where none is."""
    known = np.sort(np.where(eligible, bound, -np.inf), axis=-1)
    count = eligible.sum(axis=-1, keepdims=True)
    size = known.shape[-1]
    at = np.where(count >= place, size - place, size - 1)
    found = np.take_along_axis(known, np.clip(at, 0, None), axis=-1) if size else np.zeros(count.shape)
    return np.where(count > 0, found, 0.0)


CURVE = Curve(
    memory=Memory(record_s=96 * HOUR, drop_h=10.0, rise_h=14.0, change_k=0.35),
    eligible_after=3,
    floor=0.78,
    power=1.0,
    reference_count=5,
    confidence_z=0.5,
    ready_error=0.03,
)
