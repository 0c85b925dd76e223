"""Pitch accuracy of a voice clone: how far its F0 sits from the reference's.

The clone speaks a different text from the reference, so frames cannot be
aligned one to one. Both are compared as distributions of voiced F0 instead:
the RMSE (Hz) between their 5th..95th percentiles, and the signed offset of
their medians in semitones (+ = the clone is higher). Voiced frames only;
with fewer than MIN_VOICED_FRAMES on either side there is nothing to compare.
"""
from __future__ import annotations

import math

import numpy as np

MIN_VOICED_FRAMES = 20  # 0.1 s at 5 ms frames
QUANTILES = np.linspace(0.05, 0.95, 19)


def f0_summary(voiced_hz: np.ndarray) -> tuple[float, float]:
    """(median F0 in Hz, standard deviation of log-F0); (0, 0) without enough voiced frames."""
    voiced = np.asarray(voiced_hz, dtype=np.float64)
    voiced = voiced[voiced > 0]
    if voiced.size < MIN_VOICED_FRAMES:
        return 0.0, 0.0
    log_f0 = np.log(voiced)
    return float(np.exp(np.median(log_f0))), float(np.std(log_f0))


def pitch_accuracy(reference_hz: np.ndarray, output_hz: np.ndarray) -> dict[str, float]:
    """{"f0_rmse_hz", "f0_offset_st"}, or {} when either side has too little voiced speech."""
    ref, out = (np.asarray(x, dtype=np.float64) for x in (reference_hz, output_hz))
    ref, out = ref[ref > 0], out[out > 0]
    if min(ref.size, out.size) < MIN_VOICED_FRAMES:
        return {}
    gap = np.quantile(out, QUANTILES) - np.quantile(ref, QUANTILES)
    return {"f0_rmse_hz": float(np.sqrt(np.mean(gap**2))),
            "f0_offset_st": 12.0 * math.log2(float(np.median(out)) / float(np.median(ref)))}
