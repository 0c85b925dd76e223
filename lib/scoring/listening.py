"""The ASR hears an answer through noise of the validator's own (issue 46, docs/scoring.md#judges-that-cannot-be-bought).

Whisper transcribes a cheap voice plus any faint change differently, often better, so a miner without any
gradient buys reward by trying faint perturbations and keeping the one its local Judge scores highest. The Judge
therefore adds Gaussian noise of `NOISE_STD` (full scale = 1) to what the ASR hears, drawn from a seed the
validator picks per verdict after the answer arrives, from a secret source: the miner's lucky perturbation meets
a noise draw it did not see. The verdict row logs the seed, so `audionet-score --seed` reproduces a verdict
exactly; without the seed a local check reproduces it only within that noise (docs/miner.md).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio

# The noise's std, full scale = 1 (about -50 dBFS): the attack study's random search gains -0.003 on average through
# it (+0.082 without), honest Kokoro keeps 98 %; at 0.006 a Kokoro answer lost 6 % (docs/scoring.md).
NOISE_STD = 0.003
# Noise draws the WER is averaged over: 2 cut one verdict's spread over seeds by a third (Kokoro 0.026 -> 0.017) at
# 1.78x the Judge's time; a miner's record averages many verdicts anyway.
DRAWS = 1
SEED_BITS = 63  # a seed fits a signed 64-bit integer (JSON, W&B, numpy)


@dataclass(frozen=True)
class Listening:
    """How the ASR hears an answer: through `draws` draws of Gaussian noise of `std` (0: the answer as sent)."""

    std: float = NOISE_STD
    draws: int = DRAWS

    def __post_init__(self) -> None:
        if self.std < 0 or self.draws < 1:
            raise ValueError(f"listening noise needs std >= 0 and draws >= 1, not {self.std} and {self.draws}")

    def heard(self, audio: Audio, seed: int) -> list[Audio]:
        """What the ASR hears of `audio` under `seed`: `draws` noisy copies (one plain copy when std is 0)."""
        if not self.std:
            return [audio]
        rng = np.random.default_rng(seed)
        return [
            Audio(audio.samples + rng.normal(0.0, self.std, audio.samples.shape).astype(np.float32), audio.sample_rate)
            for _ in range(self.draws)
        ]


DEAF = Listening(0.0)  # the answer as sent: the Judge before this defence (the attack study's undefended Judge)


def secret_seed() -> int:
    """A seed no miner can know: the operating system's secret randomness, drawn after the answer arrives."""
    return secrets.randbits(SEED_BITS)


def seeds_from(seed: Optional[int]) -> Callable[[], int]:
    """Verdict seeds: a reproducible stream from `seed` (a check run again with its seed), secret ones for None."""
    if seed is None:
        return secret_seed
    rng = np.random.default_rng([seed, 46])  # its own stream: not the draws of whatever else `seed` seeds
    return lambda: int(rng.integers(0, 2**SEED_BITS))
