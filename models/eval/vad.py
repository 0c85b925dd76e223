"""Silero VAD (ONNX, shipped in the silero-vad package) for speech-ratio gates.

Audio is handed over as arrays (silero's own `read_audio` needs torchaudio).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import VoiceActivityDetector

SAMPLE_RATE = 16_000


class SileroVad(VoiceActivityDetector):
    model_id = "silero-vad"

    def __init__(self, device: str = "cpu", threshold: float = 0.5):
        with needs("the VAD gate (silero)"):
            import torch
            from silero_vad import get_speech_timestamps, load_silero_vad
        self._torch, self._timestamps = torch, get_speech_timestamps
        self._model = load_silero_vad(onnx=True)
        self.threshold, self.device = threshold, "cpu"  # a 2 MB model: the CPU is the fast place

    def speech_ratio(self, clips: Sequence[Audio]) -> list[float]:
        ratios = []
        for clip in clips:
            samples = resample(clip, SAMPLE_RATE).samples
            if len(samples) < SAMPLE_RATE // 10:
                ratios.append(0.0)
                continue
            spans = self._timestamps(
                self._torch.from_numpy(samples), self._model, threshold=self.threshold, sampling_rate=SAMPLE_RATE
            )
            ratios.append(min(1.0, sum(s["end"] - s["start"] for s in spans) / len(samples)))
        return ratios

    def warmup(self) -> None:
        self.speech_ratio([Audio(np.zeros(SAMPLE_RATE // 2, np.float32), SAMPLE_RATE)])
