"""Text to speech: speak a sentence. Judged on naturalness (MOS) and intelligibility (1 - WER)."""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np
from pydantic import field_validator

from audionet.lib.core.protocol import ServiceRequest, Text, VoiceName, printable
from audionet.lib.prompts import make_seed, make_sentence
from audionet.lib.scoring.declaration import Judging
from audionet.lib.scoring.jobs import Expect
from audionet.lib.services.base import Prompt, SpeechService
from audionet.lib.services.speech import (
    CALIBRATION_TEXT,
    CONTENT,
    DEFAULT_CHARS_PER_SECOND,
    SPEECH_GATES,
    chars_per_second,
    intelligibility,
    naturalness,
    segment_chars,
    text_of_length,
)
from audionet.models.base import SpeechSynthesizer

NATURALNESS_GATE = 0.3  # the share of the score naturalness also gates (see the declaration below)


class TTSRequest(ServiceRequest):
    service: Literal["tts"] = "tts"
    text: Text
    voice: Optional[VoiceName] = None

    _text = field_validator("text")(printable)


class TextToSpeech(SpeechService):
    name = "tts"
    title = "Text To Speech"
    request_model = TTSRequest
    backend_interface = SpeechSynthesizer
    default_backend = "baseline:espeak"
    offline_backend = "kokoro:"
    timeout_s = 20.0
    max_seconds = 30.0
    text_help = "the text to speak"
    judging = Judging(
        "tts",
        gates=SPEECH_GATES,
        analyses=("mos", "asr"),
        # Naturalness also gates the score (at most 70 % for a voice that is not natural, however clear): an
        # intelligible robotic voice otherwise kept 0.6 of the top score on intelligibility alone, and its only
        # way up was the one judge a perturbation buys (docs/scoring.md#judges-that-cannot-be-bought).
        parts=(naturalness(0.4, gate=NATURALNESS_GATE), intelligibility(0.6)),
        penalties=(CONTENT,),
    )
    metrics = (("mos", "MOS (first predictor, 1-5)"), ("wer", "WER"))

    def generate(self, backend: SpeechSynthesizer, request: TTSRequest):
        return backend.synthesize(request.text, voice=request.voice, seed=request.seed)

    def answer_seconds(self, backend: SpeechSynthesizer, request: TTSRequest) -> Optional[float]:
        return backend.answer_seconds(request.text, voice=request.voice, seed=request.seed, limit_s=self.answer_limit_s)

    def build(self, prompt: Prompt) -> TTSRequest:
        return TTSRequest(text=prompt.text, seed=prompt.seed)

    def draw(self, rng: np.random.Generator, sources=None, *, seconds: Optional[float] = None) -> TTSRequest:
        seed = make_seed(rng)
        text = make_sentence(rng) if seconds is None else text_of_length(rng, round(seconds * DEFAULT_CHARS_PER_SECOND))
        return self.request(Prompt(text, seed=seed))

    def calibrate(self, backend: SpeechSynthesizer) -> float:
        """The backend's speaking rate in characters per second (one calibration clip)."""
        audio = self.generate(backend, self.request(Prompt(CALIBRATION_TEXT)))
        return chars_per_second(CALIBRATION_TEXT, audio.seconds)

    def workload(self, rng, sources, target_seconds, calibration=None) -> list[TTSRequest]:
        pace = calibration or DEFAULT_CHARS_PER_SECOND
        return [
            self.request(Prompt(text_of_length(rng, chars), seed=make_seed(rng)))
            for chars in segment_chars(target_seconds, pace, self.max_seconds)
        ]

    def expect(self, request: TTSRequest) -> Expect:
        return Expect(self.expected_seconds(request), words=request.text)
