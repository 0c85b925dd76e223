"""Near-duplicate detection: a robust spectral fingerprint, not a hash.

A sha256 changes when one sample flips; this fingerprint does not. Each clip
becomes log band energies (24 mel bands, 100-3800 Hz, 20 ms hop at 8 kHz),
standardised over the whole clip. Because everything is in the log domain
and standardised, a gain change cancels exactly; resampling to any rate
>= 8 kHz keeps the bands; a flipped sample or added faint noise barely moves
them. Two clips are near-duplicates when their fingerprints correlate above
`DUPLICATE_CORRELATION` at the best small time offset. Two different
utterances or two renders of different prompts correlate far below it
(measured in tests/test_duplicates.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio, resample

RATE, N_FFT, HOP, BANDS = 8_000, 256, 160, 24
FRAME_S = HOP / RATE  # 20 ms per fingerprint frame
DUPLICATE_CORRELATION = 0.93  # gain/flip/resample copies: 1.0; same sentence, other voice: 0.82
MIN_FRAMES = 10
HISTORY_SIZE = 256  # clips remembered per service from recent rounds


def _mel_matrix() -> np.ndarray:
    import librosa

    return librosa.filters.mel(sr=RATE, n_fft=N_FFT, n_mels=BANDS, fmin=100.0, fmax=3800.0)


_MEL: Optional[np.ndarray] = None


def fingerprint(audio: Audio) -> np.ndarray:
    """(frames, BANDS) standardised log band energies."""
    global _MEL
    if _MEL is None:
        _MEL = _mel_matrix()
    x = resample(audio, RATE).samples.astype(np.float64)
    if len(x) < N_FFT:
        return np.zeros((0, BANDS))
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::HOP] * np.hanning(N_FFT)
    energy = (np.abs(np.fft.rfft(frames, axis=1)) ** 2) @ _MEL.T
    log = np.log(energy + 1e-4 * max(float(energy.mean()), 1e-20))  # floor relative to the clip: gain-free
    spread = log.std()
    return (log - log.mean()) / spread if spread > 0 else np.zeros_like(log)


def similarity(a: np.ndarray, b: np.ndarray, *, max_length_ratio: float = 1.15, max_lag: int = 5) -> float:
    """Best correlation of the shorter fingerprint against the longer one, over offsets up to
    `max_lag` frames plus the length difference; 0 when the lengths differ too much."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) < MIN_FRAMES or len(long_) > max_length_ratio * len(short) + max_lag:
        return 0.0
    s = short.reshape(-1) - short.mean()
    s_norm = np.linalg.norm(s)
    best = 0.0
    for lag in range(0, len(long_) - len(short) + 1):
        w = long_[lag : lag + len(short)].reshape(-1)
        w = w - w.mean()
        denom = s_norm * np.linalg.norm(w)
        if denom > 0:
            best = max(best, float(s @ w / denom))
    for lag in range(1, min(max_lag, len(short) - MIN_FRAMES) + 1):  # the copy starts late or early
        for x, y in ((short[lag:], long_[: len(short) - lag]), (short[:-lag], long_[lag : len(short)])):
            xs, ys = x.reshape(-1) - x.mean(), y.reshape(-1) - y.mean()
            denom = np.linalg.norm(xs) * np.linalg.norm(ys)
            if denom > 0:
                best = max(best, float(xs @ ys / denom))
    return best


def is_copy(a: np.ndarray, b: np.ndarray) -> bool:
    return similarity(a, b) >= DUPLICATE_CORRELATION


@dataclass
class Seen:
    label: str
    fingerprint: np.ndarray


class DuplicateFinder:
    """Flags near-duplicates within a round and against a bounded history of recent rounds."""

    def __init__(self, history_size: int = HISTORY_SIZE):
        self.history: dict[str, deque[Seen]] = {}
        self.history_size = history_size

    def forget(self) -> None:
        self.history.clear()

    def check_round(
        self, service: str, labels: Sequence[str], prints: Sequence[Optional[np.ndarray]], remember: bool = True
    ) -> list[Optional[str]]:
        """One reason per clip ("near-duplicate of X") or None; None fingerprints are skipped."""
        reasons: list[Optional[str]] = [None] * len(prints)
        past = self.history.setdefault(service, deque(maxlen=self.history_size))
        for i, fp in enumerate(prints):
            if fp is None:
                continue
            # Within the round nobody can tell who copied whom: every member of a pair loses.
            twins = [labels[j] for j, other in enumerate(prints) if j != i and other is not None and is_copy(fp, other)]
            if twins:
                reasons[i] = f"near-duplicate of {', '.join(twins[:3])} in this round"
                continue
            earlier = next((seen.label for seen in past if is_copy(fp, seen.fingerprint)), None)
            if earlier is not None:
                reasons[i] = f"near-duplicate of an earlier answer ({earlier})"
        if remember:
            self.remember(service, labels, prints)
        return reasons

    def remember(self, service: str, labels: Sequence[str], prints: Sequence[Optional[np.ndarray]]) -> None:
        """Add a round's fingerprints to the service's history (None fingerprints are skipped)."""
        past = self.history.setdefault(service, deque(maxlen=self.history_size))
        past.extend(Seen(label, fp) for label, fp in zip(labels, prints) if fp is not None)
