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
    # The longest music a validator asks for (lib/services/music.py draws up to it), and the later warm-ups' length
    LONGEST_DRAWN_S, WARMUP_S = 10.0, 1.0
    warmed = False

    @abstractmethod
    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        """Render about `seconds` of music described by `prompt`."""

    def warmup(self) -> None:
        """On a GPU the first warm-up is as long as the longest request a validator draws: on the H200 the first
        request longer than any before paid for it (MusicGen-small's 15 s took 39.7 s after a 2 s warm-up,
        11.0-11.5 s after a 15 s one; ACE-Step 1.90 then 0.69 s; docs/gpu-hosts.md). Later warm-ups, which the
        pool times, stay short."""
        on_gpu = str(getattr(self, "device", "cpu")).startswith("cuda")
        seconds = self.LONGEST_DRAWN_S if on_gpu and not self.warmed else self.WARMUP_S
        self.warmed = True
        self.generate("warm up", seconds, seed=0)
