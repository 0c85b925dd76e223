"""Gates: cheap checks that zero a response before any model looks at it.

Each gate returns a one-line reason when it fires, or None. Thresholds are
module constants so the docs and the tests can quote them.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from audionet.lib.core.audio import MIN_ACTIVE_RATIO, SILENCE_DBFS, Audio, frame_dbfs, silent
from audionet.lib.core.protocol import speech_seconds

__all__ = [
    "MIN_ACTIVE_RATIO",
    "MIN_SPEECH_RATIO",
    "SILENCE_DBFS",
    "clipped",
    "frame_dbfs",
    "silent",
    "speech_seconds",
    "wrong_length",
]

CLIP_LEVEL = 0.999
MAX_CLIPPED_RATIO = 0.01  # more than 1% of samples at full scale = clipped
MIN_SPEECH_RATIO = 0.3  # speech services: less speech than this (silero VAD) is gated "no_speech"


def clipped(audio: Audio) -> Optional[str]:
    ratio = float(np.mean(np.abs(audio.samples) >= CLIP_LEVEL)) if len(audio.samples) else 0.0
    if ratio > MAX_CLIPPED_RATIO:
        return f"clipped: {ratio:.1%} of samples at full scale"
    return None


def wrong_length(audio: Audio, low: float, high: float) -> Optional[str]:
    if not low <= audio.seconds <= high:
        return f"wrong length: {audio.seconds:.2f} s, expected {low:.1f}-{high:.1f} s"
    return None
