"""One fingerprint against a whole set of fingerprints at once: which of them are copies of it, decided
exactly as `duplicates.similarity` decides each pair, at a fraction of its cost.

A pair is a copy when, at some alignment (an offset at which the shorter clip lies within the longer, give or
take `MAX_LAG` frames), the Pearson correlation of the overlapping frames reaches the threshold. Comparing every
pair at every alignment over all 24 bands is what made the check quadratic and slow. Here each alignment's
correlation is first bounded from above, for every candidate and every offset at once:

    r = (<P a, P b> + <Q a, Q b>) / (|a| |b|)  <=  (<P a, P b> + |Q a| |Q b|) / (|a| |b|)

for centred segments a and b, where P replaces each frame's bands by their mean (a projection that shifts in
time leave alone) and Q = 1 - P (Cauchy-Schwarz). With P over all 24 bands, <P a, P b> is one number per
frame pair: one matrix-vector product per offset covers every candidate; the norms and means come from prefix
sums. The alignments whose bound reaches the threshold are bounded again with P over 6 groups of 4 bands
(tighter), and only those that still reach it get the full correlation. Honest answers rarely get past the
first bound (different sentences of one voice bound at most 0.90, the same sentence in another voice 0.89,
threshold 0.93) and hardly ever past the second (procedural music: 0.88), so the cost is a few multiply-adds
per frame and candidate, and the verdicts are the full check's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

DUPLICATE_CORRELATION = 0.93  # gain/flip/resample copies: 1.0; same sentence, other voice: 0.82
MAX_LAG = 5  # frames either side of "the shorter lies within the longer"
MAX_LENGTH_RATIO = 1.15  # longer than this times the shorter (+ MAX_LAG frames): never a copy
MIN_FRAMES = 10
GROUPS = 6  # the second bound: means over this many groups of adjacent bands
EPSILON = 1e-4  # float32 sums: a bound this close under the threshold still counts as reaching it
MAX_EXACT = 256  # full correlations per query at most (bounded cost whatever a set of crafted clips holds)
MEANS, MEANS_SQ, GROUPS_SQ, SQUARES = range(4)  # columns of a summary's prefix sums


def length_fits(short: int, long_: int) -> bool:
    return short >= MIN_FRAMES and long_ <= MAX_LENGTH_RATIO * short + MAX_LAG


def offsets(length_a: int, length_b: int) -> range:
    """Offsets s (frame t of a against frame t + s of b) at which the shorter lies within the longer, give or
    take MAX_LAG frames."""
    return range(min(0, length_b - length_a) - MAX_LAG, max(0, length_b - length_a) + MAX_LAG + 1)


def overlap(length_a: int, length_b: int, s):
    """The frames of a that meet b at offset s: [low, high)."""
    return np.maximum(0, -s), np.minimum(length_a, length_b - s)


def correlation(a: np.ndarray, b: np.ndarray, s: int) -> float:
    """Pearson correlation of a's and b's overlapping frames at offset s, over every band."""
    low, high = overlap(len(a), len(b), s)
    x, y = a[low:high].reshape(-1).astype(np.float64), b[low + s : high + s].reshape(-1).astype(np.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.linalg.norm(x) * np.linalg.norm(y)
    return float(x @ y / denominator) if denominator > 0 else 0.0


@dataclass(frozen=True)
class Summary:
    """What the bounds need of one fingerprint."""

    means: np.ndarray  # (frames,) float32: each frame's mean over the bands
    groups: np.ndarray  # (frames, GROUPS) float32: its means over groups of adjacent bands
    prefix: np.ndarray  # (4, frames + 1) float64 prefix sums of the means, their squares, the groups' squares
    # summed over the groups, and each frame's squares summed over the bands (a row each: gathers read less)

    @classmethod
    def of(cls, fingerprint: np.ndarray) -> Summary:
        frames = np.asarray(fingerprint, np.float64).reshape(len(fingerprint), -1)
        groups = frames.reshape(len(frames), GROUPS, -1).mean(axis=2)
        means = groups.mean(axis=1)
        columns = np.stack([means, means**2, (groups**2).sum(axis=1), (frames**2).sum(axis=1)])
        prefix = np.concatenate([np.zeros((4, 1)), np.cumsum(columns, axis=1)], axis=1)
        return cls(means.astype(np.float32), groups.astype(np.float32), prefix)


def toeplitz(values: np.ndarray, width: int) -> np.ndarray:
    """((len(values) + width - 1) x channels, width) for `values` of shape (frames,) or (frames, channels): column
    k holds `values` from frame k on, so that a row of frames (flattened frame by frame) times it is the row's dot
    product with `values` at each of `width` offsets."""
    values = values.reshape(len(values), -1)
    zeros = np.zeros((width - 1, values.shape[1]), values.dtype)
    padded = np.concatenate([zeros, values, zeros])
    shifted = np.lib.stride_tricks.sliding_window_view(padded, width, axis=0)[: len(values) + width - 1, :, ::-1]
    return shifted.reshape(-1, width)


def terms(prefix: np.ndarray, low, high, squares: int, width: int, bands: int):
    """(frames, mean, |centred|^2, |Q centred|^2) of segments [low, high) from prefix sums; `squares` is the
    column of the projection's squared means, `width` the bands each of its means stands for."""
    n = high - low
    mean = (prefix[MEANS][high] - prefix[MEANS][low]) / np.maximum(n, 1)
    centred = prefix[SQUARES][high] - prefix[SQUARES][low] - bands * n * mean**2
    projected = width * (prefix[squares][high] - prefix[squares][low]) - bands * n * mean**2
    return n, mean, centred, np.maximum(centred - projected, 0.0)


def bound(cross_sum, squares: int, width: int, bands: int, query_prefix, prefix, low, high, start) -> np.ndarray:
    """The upper bound of the correlation: (<P a, P b> + |Q a| |Q b|) / (|a| |b|) for centred a and b, where a is the
    query's frames [low, high) and b a member's from `start + low` on; `cross_sum` is <P a, P b> before centring,
    `squares` and `width` the projection's column of squared means and the bands each of its means stands for."""
    n, mean_q, centred_q, residual_q = terms(query_prefix, low, high, squares, width, bands)
    _, mean_c, centred_c, residual_c = terms(prefix, start + low, start + high, squares, width, bands)
    cross = width * cross_sum - bands * n * mean_q * mean_c
    denominator = np.sqrt(np.maximum(centred_q, 0.0) * np.maximum(centred_c, 0.0))
    value = np.divide(
        cross + np.sqrt(residual_q * residual_c), denominator, out=np.zeros(np.shape(cross)), where=denominator > 0
    )
    return np.where(n >= MIN_FRAMES, value, -np.inf)


class Packed:
    """Every member's summary end to end in arrays that grow by doubling: adding a member copies only it. The
    means and groups keep one zero frame after the last member, read for frames outside a member."""

    def __init__(self) -> None:
        self.count = self.frames = self.sums = 0
        self.lengths, self.starts = np.zeros(64, np.int64), np.zeros(64, np.int64)
        self.means, self.groups = np.zeros(4096, np.float32), np.zeros((4096, GROUPS), np.float32)
        self.prefix = np.zeros((4, 4096))

    @staticmethod
    def _room(array: np.ndarray, needed: int, axis: int = 0) -> np.ndarray:
        if needed <= array.shape[axis]:
            return array
        shape = list(array.shape)
        shape[axis] = max(needed, 2 * array.shape[axis])
        grown = np.zeros(shape, array.dtype)
        grown[(slice(None),) * axis + (slice(0, array.shape[axis]),)] = array
        return grown

    def append(self, summary: Summary) -> None:
        frames = len(summary.means)
        self.lengths, self.starts = self._room(self.lengths, self.count + 1), self._room(self.starts, self.count + 1)
        self.means = self._room(self.means, self.frames + frames + 1)
        self.groups = self._room(self.groups, self.frames + frames + 1)
        self.prefix = self._room(self.prefix, self.sums + frames + 1, axis=1)
        self.lengths[self.count], self.starts[self.count] = frames, self.frames
        self.means[self.frames : self.frames + frames] = summary.means
        self.groups[self.frames : self.frames + frames] = summary.groups
        self.prefix[:, self.sums : self.sums + frames + 1] = summary.prefix
        self.count, self.frames, self.sums = self.count + 1, self.frames + frames, self.sums + frames + 1

    def copy(self) -> Packed:
        other = Packed.__new__(Packed)
        other.__dict__.update({k: v.copy() if isinstance(v, np.ndarray) else v for k, v in self.__dict__.items()})
        return other


class PrintSet:
    """Labelled fingerprints, packed for the search."""

    def __init__(self, labels: Sequence[str] = (), prints: Sequence[np.ndarray] = ()):
        self.labels: list[str] = []
        self.prints: list[np.ndarray] = []
        self.summaries: list[Summary] = []
        self.packed = Packed()
        for label, print_ in zip(labels, prints):
            self.add(label, print_)

    def __len__(self) -> int:
        return len(self.prints)

    def add(self, label: str, fingerprint: np.ndarray, summary: Optional[Summary] = None) -> None:
        summary = summary or Summary.of(fingerprint)
        self.labels.append(label)
        self.prints.append(np.asarray(fingerprint, np.float32))
        self.summaries.append(summary)
        self.packed.append(summary)

    def drop_oldest(self, count: int) -> None:
        if count > 0:
            del self.labels[:count], self.prints[:count], self.summaries[:count]
            self.packed = Packed()
            for summary in self.summaries:
                self.packed.append(summary)

    def copy(self) -> PrintSet:
        other = PrintSet()
        other.labels, other.prints, other.summaries = list(self.labels), list(self.prints), list(self.summaries)
        other.packed = self.packed.copy()
        return other

    def copies(
        self,
        fingerprint: np.ndarray,
        summary: Optional[Summary] = None,
        limit: int = 3,
        *,
        before: int = 0,
        limit_before: int = 0,
    ) -> list[int]:
        """Indices of members that are copies of `fingerprint`, oldest first: up to `limit` from index `before`
        on, and up to `limit_before` below it."""
        if not self.prints or len(fingerprint) < MIN_FRAMES:
            return []
        query = summary or Summary.of(fingerprint)
        packed = self.packed
        lengths, starts = packed.lengths[: packed.count], packed.starts[: packed.count]
        bases, means, groups, prefix = starts + np.arange(packed.count), packed.means, packed.groups, packed.prefix
        length, bands = len(fingerprint), fingerprint.shape[1]
        shorter, longer = np.minimum(lengths, length), np.maximum(lengths, length)
        chosen = np.flatnonzero((shorter >= MIN_FRAMES) & (longer <= MAX_LENGTH_RATIO * shorter + MAX_LAG))
        if not len(chosen):
            return []
        chosen = chosen[np.argsort(-np.abs(lengths[chosen] - length), kind="stable")]  # the most offsets first
        their = lengths[chosen]
        first = np.minimum(0, their - length) - MAX_LAG  # each candidate's first offset
        widths = np.abs(their - length) + 2 * MAX_LAG + 1
        width = int(widths[0])
        shift = first[:, None] + np.arange(width)[None, :]
        low, high = overlap(length, their[:, None], shift)
        high = np.maximum(high, low)
        valid = np.arange(width)[None, :] < widths[:, None]
        # Each candidate as a row from its first offset on (zero outside it): one product per offset, over the
        # candidates that have that offset (they come first).
        columns = first[:, None] + np.arange(length + width - 1)[None, :]
        inside = (columns >= 0) & (columns < their[:, None])
        frames = np.where(inside, starts[chosen][:, None] + columns, packed.frames)
        rows = means[frames]
        products = rows @ toeplitz(query.means, width)  # one matrix product for every candidate and offset
        at = bases[chosen][:, None] + shift
        r, k = np.nonzero(valid)  # bounded only where the offset exists (a third to a half of the grid)
        lo, hi, a = low[r, k], high[r, k], at[r, k]
        first_bound = bound(products[r, k], MEANS_SQ, bands, bands, query.prefix, prefix, lo, hi, a)
        reaches = first_bound >= DUPLICATE_CORRELATION - EPSILON
        passed = np.stack([r[reaches], k[reaches]], axis=1)
        if not len(passed):
            return []
        group_width = bands // GROUPS
        rows_passed, row_of = np.unique(passed[:, 0], return_inverse=True)  # candidates with an alignment left
        windows = groups[frames[rows_passed]].reshape(len(rows_passed), -1)  # (candidates, frames x GROUPS)
        crosses = windows @ toeplitz(query.groups, width)  # every offset of every such candidate at once
        r, k = passed.T
        lo, hi, a = low[r, k], high[r, k], at[r, k]
        second = bound(crosses[row_of, k], GROUPS_SQ, group_width, bands, query.prefix, prefix, lo, hi, a)
        found, exact, counts = [], 0, [0, 0]
        keep = second >= DUPLICATE_CORRELATION - EPSILON
        for row in sorted(np.unique(passed[keep, 0]), key=lambda r: chosen[r]):  # in the order they joined
            index = int(chosen[row])
            side = int(index >= before)
            if counts[side] >= (limit if side else limit_before):
                continue
            mine = keep & (passed[:, 0] == row)
            for k in passed[mine, 1][np.argsort(-second[mine])]:
                exact += 1
                if correlation(fingerprint, self.prints[index], int(shift[row, k])) >= DUPLICATE_CORRELATION:
                    found.append(index)
                    counts[side] += 1
                    break
                if exact >= MAX_EXACT:
                    return sorted(found)
            if counts[0] >= limit_before and counts[1] >= limit:
                break
        return sorted(found)
