"""One small interface per kind of evaluation model.

Evaluators load once, pick device and dtype once, and take a batch: the
validator scores a whole round's responses in one call per evaluator, which
is where a GPU pays off (batch size decides the speed-up: docs/methodology.md#gpu-optimisation-checklist).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio


class Evaluator(ABC):
    """What every evaluator reports, for timing keys and logs."""

    model_id: str = "unknown"
    device: str = "cpu"

    def warmup(self) -> None:
        """One tiny call so the first round is not a cold start."""


class Transcriber(Evaluator):
    @abstractmethod
    def transcribe(self, clips: Sequence[Audio]) -> list[str]:
        """Text heard in each clip (empty string when nothing is heard)."""


class MosPredictor(Evaluator):
    name: str = "mos"  # component key: mos_<name>
    mos_range: tuple[float, float] = (1.0, 4.0)  # the scores that map to naturalness 0 and 1

    @abstractmethod
    def predict(self, clips: Sequence[Audio]) -> list[float]:
        """Naturalness mean opinion score per clip, on the 1..5 scale."""


class AestheticsPredictor(Evaluator):
    @abstractmethod
    def rate(self, clips: Sequence[Audio]) -> list[dict[str, float]]:
        """Per clip, a score per axis on the model's scale (e.g. production quality 1..10)."""


class SpeakerEncoder(Evaluator):
    @abstractmethod
    def embed(self, clips: Sequence[Audio]) -> np.ndarray:
        """(len(clips), dim) L2-normalised speaker embeddings."""

    def similarity(self, a: Audio, b: Audio) -> float:
        """Cosine similarity of two clips' speakers, in -1..1."""
        ea, eb = self.embed([a, b])
        return float(np.dot(ea, eb))


class TextAudioScorer(Evaluator):
    @abstractmethod
    def score(self, texts: Sequence[str], clips: Sequence[Audio]) -> list[float]:
        """How well clip i matches text i (cosine-like, higher is better)."""


class VoiceActivityDetector(Evaluator):
    @abstractmethod
    def speech_ratio(self, clips: Sequence[Audio]) -> list[float]:
        """Share of each clip (0..1) that is speech."""
