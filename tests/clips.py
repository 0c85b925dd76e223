"""Awkward but legal clips every evaluator must survive with finite output (the wire lets them
through: finite samples in [-1, 1], any length up to a service's limit)."""

from __future__ import annotations

import numpy as np

from audionet.lib.core.audio import Audio

RATE = 16_000


def awkward() -> dict[str, Audio]:
    t = np.arange(2 * RATE) / RATE
    return {
        "silence": Audio(np.zeros(2 * RATE), RATE),
        "0.1 s": Audio(0.5 * np.sin(2 * np.pi * 440 * t[: RATE // 10]), RATE),
        "one sample": Audio(np.full(1, 0.5), RATE),
        "full-scale square": Audio(np.where(np.sin(2 * np.pi * 50 * t) >= 0, 1.0, -1.0), RATE),
        "nyquist": Audio(np.tile([1.0, -1.0], RATE), RATE),
        "dc": Audio(np.ones(2 * RATE), RATE),
    }


def long_noise(seconds: float = 30.0, rate: int = RATE) -> Audio:
    return Audio(0.1 * np.random.default_rng(30).standard_normal(int(seconds * rate)), rate)
