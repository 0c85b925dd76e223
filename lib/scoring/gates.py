"""Gates: cheap checks that zero a response before any model looks at it.

Each gate returns a one-line reason when it fires, or None. Thresholds are
module constants so the README and the tests can quote them.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from lib.audio import Audio

SILENCE_DBFS = -45.0          # a 20 ms frame quieter than this counts as silent
MIN_ACTIVE_RATIO = 0.2        # at least this share of frames must be above it
CLIP_LEVEL = 0.999
MAX_CLIPPED_RATIO = 0.01      # more than 1% of samples at full scale = clipped
SPEECH_SECONDS_PER_CHAR = (0.025, 0.2)  # plausible speaking rates (≈5-40 chars/s)
SPEECH_SLACK_S = 1.5
MUSIC_LENGTH_TOLERANCE = (0.1, 0.5)  # relative, absolute seconds: whichever is larger


def frame_dbfs(audio: Audio, frame_s: float = 0.02) -> np.ndarray:
    size = max(1, int(audio.sample_rate * frame_s))
    count = len(audio.samples) // size
    if count == 0:
        return np.full(1, -120.0)
    frames = audio.samples[: count * size].astype(np.float64).reshape(count, size)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-6))


def silent(audio: Audio) -> Optional[str]:
    active = float(np.mean(frame_dbfs(audio) > SILENCE_DBFS))
    if active < MIN_ACTIVE_RATIO:
        return f"silent: only {active:.0%} of frames above {SILENCE_DBFS:g} dBFS"
    return None


def clipped(audio: Audio) -> Optional[str]:
    ratio = float(np.mean(np.abs(audio.samples) >= CLIP_LEVEL)) if len(audio.samples) else 0.0
    if ratio > MAX_CLIPPED_RATIO:
        return f"clipped: {ratio:.1%} of samples at full scale"
    return None


def expected_seconds(service: str, request) -> tuple[float, float]:
    """The (min, max) duration a correct answer to `request` can have."""
    if service == "music":
        rel, absolute = MUSIC_LENGTH_TOLERANCE
        slack = max(rel * request.seconds, absolute)
        return request.seconds - slack, request.seconds + slack
    low, high = SPEECH_SECONDS_PER_CHAR
    chars = len(request.text)
    return low * chars, high * chars + SPEECH_SLACK_S


def wrong_length(service: str, request, audio: Audio) -> Optional[str]:
    low, high = expected_seconds(service, request)
    if not low <= audio.seconds <= high:
        return f"wrong length: {audio.seconds:.2f} s, expected {low:.1f}-{high:.1f} s"
    return None
