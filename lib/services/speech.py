"""What the speech services (TTS, voice clone) share: the length of speech a text
asks for, and texts sized to a target length for benchmark workloads.

A target longer than one request allows (30 s of audio; 400 characters of
text) becomes equal segments that a benchmark run generates back to back.
"""

from __future__ import annotations

import numpy as np

from audionet.lib.prompts import make_sentence
from audionet.lib.protocol import MAX_TEXT_CHARS
from audionet.lib.services.base import split_seconds

CALIBRATION_TEXT = "The quick brown fox jumps over the lazy dog while the band plays on."
DEFAULT_CHARS_PER_SECOND = 15.0


def text_of_length(rng: np.random.Generator, chars: int) -> str:
    """Prompt sentences joined up to about `chars` characters (at least one sentence)."""
    words, length = [], 0
    while length < chars:
        sentence = make_sentence(rng)
        words.append(sentence)
        length += len(sentence) + 1
    return " ".join(words)[: max(1, min(chars, MAX_TEXT_CHARS))].rstrip() or "Hello."


def segment_chars(target_seconds: float, chars_per_second: float, max_seconds: float) -> list[int]:
    """Characters per request so each request stays under both the text and the seconds cap."""
    seconds_per_request = min(max_seconds, MAX_TEXT_CHARS / chars_per_second)
    return [max(8, round(s * chars_per_second)) for s in split_seconds(target_seconds, seconds_per_request)]


def chars_per_second(text: str, seconds: float) -> float:
    """The pace of a clip that speaks `text` in `seconds`."""
    return len(text) / max(seconds, 0.1)
