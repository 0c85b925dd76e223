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

from audionet.lib.core.f0 import MIN_VOICED_FRAMES

QUANTILES = np.linspace(0.05, 0.95, 19)


def pitch_accuracy(reference_hz: np.ndarray, output_hz: np.ndarray) -> dict[str, float]:
    """{"f0_rmse_hz", "f0_offset_st"}, or {} when either side has too little voiced speech."""
    ref, out = (np.asarray(x, dtype=np.float64) for x in (reference_hz, output_hz))
    ref, out = ref[ref > 0], out[out > 0]
    if min(ref.size, out.size) < MIN_VOICED_FRAMES:
        return {}
    gap = np.quantile(out, QUANTILES) - np.quantile(ref, QUANTILES)
    return {
        "f0_rmse_hz": float(np.sqrt(np.mean(gap**2))),
        "f0_offset_st": 12.0 * math.log2(float(np.median(out)) / float(np.median(ref))),
    }
