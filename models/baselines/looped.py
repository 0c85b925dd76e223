"""The "1 s loop" cheat as a backend: one second of another backend's answer, looped to its length.

Not a model anyone should serve: it exists so a local subnet (`audionet-localnet`) and the adversary
study can show what the validator pays a miner that fakes its work (`loop:<spec>`, e.g.
`loop:baseline:espeak`). The adversary catalogue's "1 s loop" attack uses the same `one_second_looped`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError
from audionet.models.base import Backend, MusicGenerator, SpeechSynthesizer, VoiceCloner


def one_second_looped(audio: Audio) -> Audio:
    """The second that starts a third of the way in, repeated to the clip's full length."""
    rate, n = audio.sample_rate, len(audio.samples)
    start = n // 3
    second = audio.samples[start : start + rate]
    if len(second) == 0:
        return audio
    return Audio(np.tile(second, -(-n // len(second)))[:n], rate)


class _Looped:
    def __init__(self, inner: Backend):
        self.inner = inner
        self.model_id = f"loop:{inner.model_id}"
        self.device = inner.device


class LoopedSpeech(_Looped, SpeechSynthesizer):
    def synthesize(self, text: str, *, voice: Optional[str] = None, seed: int = 0) -> Audio:
        return one_second_looped(self.inner.synthesize(text, voice=voice, seed=seed))


class LoopedClone(_Looped, VoiceCloner):
    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        return one_second_looped(self.inner.clone(text, reference, reference_text, seed=seed))


class LoopedMusic(_Looped, MusicGenerator):
    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        return one_second_looped(self.inner.generate(prompt, seconds, seed=seed))


def looped(inner: Backend) -> Backend:
    """The looping twin of `inner`, with the same interface."""
    for interface, cls in (
        (SpeechSynthesizer, LoopedSpeech),
        (VoiceCloner, LoopedClone),
        (MusicGenerator, LoopedMusic),
    ):
        if isinstance(inner, interface):
            return cls(inner)
    raise BackendError(f"loop: cannot loop a {type(inner).__name__}")
