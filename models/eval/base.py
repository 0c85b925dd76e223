"""One small interface per kind of evaluation model.

Evaluators load once, pick device and dtype once, and take a batch: the
validator scores a whole round's responses in one call per evaluator, which
is where a GPU pays off (batch size decides the speed-up: docs/methodology.md#gpu-optimisation-checklist).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

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
    name: str = "mos"  # measure key: mos_<name> (its range to naturalness: the services' declarations)

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


class AudioTagger(Evaluator):
    """A sound classifier or music tagger: a probability per label (AudioSet classes, music tags)."""

    labels: tuple[str, ...] = ()

    @abstractmethod
    def tag(self, clips: Sequence[Audio]) -> np.ndarray:
        """(len(clips), len(self.labels)) probabilities in 0..1, each clip's windows averaged."""

    def scores(self, clips: Sequence[Audio]) -> list[dict[str, float]]:
        """`tag` as one {label: probability} per clip."""
        return [dict(zip(self.labels, map(float, row))) for row in self.tag(clips)]


class Note(NamedTuple):
    pitch: int  # MIDI note number (60 is middle C)
    onset_s: float
    offset_s: float
    confidence: float  # 0..1, the model's mean activation over the note


class NoteTranscriber(Evaluator):
    @abstractmethod
    def notes(self, clips: Sequence[Audio]) -> list[list[Note]]:
        """Per clip, the notes heard (polyphonic), ordered by onset; an empty list when none are."""
