"""Near-duplicate detection: a robust spectral fingerprint, not a hash.

A sha256 changes when one sample flips; this fingerprint does not. Each clip
becomes log band energies (24 mel bands, 100-3800 Hz, 32 ms windows every 20 ms),
standardised over the whole clip. Because everything is in the log domain
and standardised, a gain change cancels exactly; resampling to any rate
>= 8 kHz keeps the bands and the frames (both are set in Hz and seconds); a
flipped sample or added faint noise barely moves them. Two clips are near-duplicates when their fingerprints correlate above
`DUPLICATE_CORRELATION` at the best offset at which the shorter lies within the
longer, give or take 5 frames (lengths within 15 %). Two different utterances
or two renders of different prompts correlate far below it (measured in
tests/lib/scoring/test_duplicates.py).

`DuplicateFinder` checks each answer as it arrives against the service's history (the answers of earlier
rounds, bounded, saved with the validator's state) and the answers of its round so far, all members at once
(lib/scoring/prints.py: the same verdicts as `similarity`, at a fraction of its cost); a round is closed when
all its answers are in, and its answers then join the history.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

import numpy as np
import scipy.fft

from audionet.lib.core.atomic import atomic_file
from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.threads import one_blas_thread
from audionet.lib.scoring.prints import (
    DUPLICATE_CORRELATION,
    MIN_FRAMES,
    PrintSet,
    Summary,
    correlation,
    length_fits,
    offsets,
    overlap,
)

__all__ = ["DUPLICATE_CORRELATION", "DuplicateFinder", "fingerprint", "is_copy", "similarity"]

BANDS = 24
FRAME_S, WINDOW_S = 0.02, 0.032  # hop and window in seconds (160 and 256 samples at 8 kHz)
RATE = 8_000  # rates on which a 20 ms hop is not a whole number of samples (11,025 Hz) are resampled to this
HISTORY_SIZE = 256  # clips remembered per service from recent rounds
EARLIER = 1  # earlier answers named in a reason
TWINS = 3  # answers of the same round named in a reason


@lru_cache(maxsize=16)
def _analysis(rate: int) -> tuple[int, int, int, np.ndarray, np.ndarray]:
    """(window, hop, FFT size, Hann window, mel matrix (bins, BANDS)) at `rate`: the same bands in Hz and the same
    frames in seconds at every rate, so a resampled copy lines up frame by frame."""
    import librosa

    window, hop = round(WINDOW_S * rate), round(FRAME_S * rate)
    n_fft = 1 << (window - 1).bit_length()
    mel = librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=BANDS, fmin=100.0, fmax=3800.0)
    bins = int(np.flatnonzero(mel.any(axis=0)).max()) + 1  # nothing above 3.8 kHz is read
    return window, hop, n_fft, np.hanning(window).astype(np.float32), np.ascontiguousarray(mel[:, :bins].T, np.float32)


def fingerprint(audio: Audio) -> np.ndarray:
    """(frames, BANDS) standardised log band energies. Computed at the clip's own rate (resampling to 8 kHz first
    cost twice the rest) on one thread: a validator fingerprints while its evaluators keep the cores busy, and a
    small FFT or product split over threads then spends more time waiting for them than working."""
    if (audio.sample_rate * FRAME_S) % 1:
        audio = resample(audio, RATE)
    window, hop, n_fft, hann, mel = _analysis(audio.sample_rate)
    x = np.asarray(audio.samples, np.float32)
    if len(x) < window:
        return np.zeros((0, BANDS), np.float32)
    frames = np.lib.stride_tricks.sliding_window_view(x, window)[::hop] * hann
    spectrum = scipy.fft.rfft(frames, n=n_fft, axis=1, workers=1)[:, : len(mel)]
    energy = np.einsum("fb,bm->fm", spectrum.real**2 + spectrum.imag**2, mel)  # einsum's own loop: no BLAS threads
    log = np.log(energy.astype(np.float64) + 1e-4 * max(float(energy.mean()), 1e-20))  # floor relative to the clip
    spread = log.std()
    return (log - log.mean()) / spread if spread > 0 else np.zeros_like(log)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Best correlation of the two fingerprints over the offsets at which the shorter lies within the longer
    (give or take 5 frames); 0 when the lengths differ too much. The reference: `PrintSet.copies` decides the
    same pairs for a whole set at once."""
    if not length_fits(min(len(a), len(b)), max(len(a), len(b))):
        return 0.0
    shared = {s: overlap(len(a), len(b), s) for s in offsets(len(a), len(b))}
    return max((correlation(a, b, s) for s, (low, high) in shared.items() if high - low >= MIN_FRAMES), default=0.0)


def is_copy(a: np.ndarray, b: np.ndarray) -> bool:
    return similarity(a, b) >= DUPLICATE_CORRELATION


@dataclass
class RoundPrints:
    """One service's answers of one round so far, after its history (the members below `start`), and what
    each answer was found to copy."""

    service: str
    members: PrintSet
    start: int
    slots: list[Optional[int]] = field(default_factory=list)  # per answer: its member, None without a print
    twins: dict[int, list[int]] = field(default_factory=dict)  # per member: members of this round it copies
    earlier: dict[int, list[int]] = field(default_factory=dict)  # per member: earlier answers it copies


class DuplicateFinder:
    """Near-duplicates within a round and against a bounded history of recent rounds, per service. One open
    round per service at a time, one caller at a time."""

    def __init__(self, history_size: int = HISTORY_SIZE):
        self.history: dict[str, PrintSet] = {}
        self.history_size = history_size

    def forget(self) -> None:
        self.history.clear()

    def open(self, service: str) -> RoundPrints:
        past = self.history.get(service, PrintSet())
        return RoundPrints(service, past.copy(), len(past))

    def check(self, found: RoundPrints, label: str, print_: Optional[np.ndarray]) -> None:
        """One answer of the round `found`, as it arrives (None: no fingerprint, nothing to compare)."""
        if print_ is None:
            found.slots.append(None)
            return
        summary = Summary.of(print_)
        with one_blas_thread():
            copied = found.members.copies(print_, summary, TWINS, before=found.start, limit_before=EARLIER)
        member = len(found.members)
        found.twins[member] = [i for i in copied if i >= found.start]
        found.earlier[member] = [i for i in copied if i < found.start]
        for twin in found.twins[member]:  # within a round nobody can tell who copied whom: both lose
            found.twins[twin].append(member)
        found.members.add(label, print_, summary)
        found.slots.append(member)

    @staticmethod
    def reason(found: RoundPrints, slot: int) -> Optional[str]:
        """Why the round's answer `slot` is a copy, as far as the answers so far tell ("near-duplicate of X"),
        or None; a twin that arrives later can still add a reason until the round is closed."""
        member, labels = found.slots[slot], found.members.labels
        if member is None:
            return None
        if found.twins[member]:
            names = ", ".join(labels[twin] for twin in sorted(found.twins[member])[:TWINS])
            return f"near-duplicate of {names} in this round"
        if found.earlier[member]:
            return f"near-duplicate of an earlier answer ({labels[found.earlier[member][0]]})"
        return None

    def close(self, found: RoundPrints, remember: bool = True) -> list[Optional[str]]:
        """One reason per answer ("near-duplicate of X") or None; with `remember`, the round's answers join
        the service's history."""
        reasons = [self.reason(found, slot) for slot in range(len(found.slots))]
        if remember:
            found.members.drop_oldest(len(found.members) - self.history_size)
            self.history[found.service] = found.members
        return reasons

    def check_round(
        self, service: str, labels: Sequence[str], prints: Sequence[Optional[np.ndarray]], remember: bool = True
    ) -> list[Optional[str]]:
        """A whole round at once: one reason per clip or None; None fingerprints are skipped."""
        found = self.open(service)
        for label, print_ in zip(labels, prints):
            self.check(found, label, print_)
        return self.close(found, remember)

    def remember(self, service: str, labels: Sequence[str], prints: Sequence[Optional[np.ndarray]]) -> None:
        """Add fingerprints to the service's history, the oldest leaving beyond `history_size`."""
        past = self.history.setdefault(service, PrintSet())
        for label, print_ in zip(labels, prints):
            if print_ is not None:
                past.add(label, print_)
        past.drop_oldest(len(past) - self.history_size)

    def save(self, path: str) -> None:
        """The history as one .npz, written atomically (temp file, fsync, rename)."""
        arrays: dict[str, np.ndarray] = {}
        index = {}
        for n, (service, past) in enumerate(self.history.items()):
            index[service] = {"key": f"s{n}", "labels": past.labels}
            arrays[f"s{n}_lengths"] = np.array([len(p) for p in past.prints], np.int64)
            arrays[f"s{n}_frames"] = np.concatenate(past.prints) if past.prints else np.zeros((0, BANDS), np.float32)
        arrays["index"] = np.frombuffer(json.dumps(index).encode(), np.uint8)
        with atomic_file(path, "wb", ".npz") as handle:
            np.savez(handle, **arrays)

    def load(self, path: str) -> None:
        """The history saved at `path` (nothing when there is none), bounded by this finder's size."""
        if not os.path.exists(path):
            return
        try:
            with np.load(path) as data:
                index = json.loads(data["index"].tobytes().decode())
                for service, entry in index.items():
                    lengths = data[f"{entry['key']}_lengths"]
                    frames = np.split(data[f"{entry['key']}_frames"], np.cumsum(lengths)[:-1]) if len(lengths) else []
                    self.history.pop(service, None)
                    self.remember(service, [str(label) for label in entry["labels"]], frames)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"cannot read the duplicate history {path}: {error}") from None
