"""The one small interface per kind of generation backend.

A backend loads once, picks its device once, and is then called from worker
threads; it returns float32 mono `Audio` and never touches the filesystem
with anything that came from the wire.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager, nullcontext
from typing import Optional

from audionet.lib.core.audio import Audio

__all__ = ["Audio", "Backend", "SpeechSynthesizer", "VoiceCloner", "MusicGenerator"]


class Backend(ABC):
    """What every backend reports for the response metadata."""

    model_id: str = "unknown"
    device: str = "cpu"
    # Set by the timing layer: measure(stage) -> context manager timing one stage of a
    # request (e.g. "text_encoder", "decoder", "codec"). None: stages are not timed.
    measure: Optional[Callable[[str], AbstractContextManager]] = None
    # Speed/quality presets the backend can be loaded with (load_backend(preset=...)); empty: none.
    presets: tuple[str, ...] = ()
    preset: Optional[str] = None

    def stage(self, name: str) -> AbstractContextManager:
        """`with self.stage("decoder"): ...` times that part of a request when timing is on."""
        return self.measure(name) if self.measure is not None else nullcontext()

    def warmup(self) -> None:
        """Run one tiny request so the first real one is not a cold start."""


class SpeechSynthesizer(Backend):
    # The voice names a request may pick (a Mapping's keys count); empty: one default voice.
    voices: Collection[str] = ()

    @abstractmethod
    def synthesize(self, text: str, *, voice: Optional[str] = None, seed: int = 0) -> Audio:
        """Speak `text`; `voice` is a backend-specific voice name or None for the default."""

    def answer_seconds(
        self, text: str, *, voice: Optional[str] = None, seed: int = 0, limit_s: float
    ) -> Optional[float]:
        """At least how long `synthesize(text, voice=voice, seed=seed)` speaks, by this backend's own front end
        and counted up to just past `limit_s`, without generating it; None where the backend cannot tell. The
        miner refuses, before any generation, text its backend would speak past the limit, and plans with it."""
        return None

    def warmup(self) -> None:
        self.synthesize("Warm up.", seed=0)


class VoiceCloner(Backend):
    @abstractmethod
    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        """Speak `text` in the voice of `reference` (whose transcript is `reference_text`)."""


class MusicGenerator(Backend):
    @abstractmethod
    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        """Render about `seconds` of music described by `prompt`."""

    def warmup(self) -> None:
        self.generate("warm up", 1.0, seed=0)
