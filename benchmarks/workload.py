"""The requests a benchmark run sends, sized to the mode's audio length.

Every request stays inside the wire protocol's limits, so the numbers are for
requests a validator could really send: a target longer than one request
allows (30 s of audio; 400 characters of text) is split into equal segments
that one run generates back to back, and the run's audio duration is the sum.
TTS and VC text length comes from the backend's own speaking rate, measured
on the warm-up clip.
"""
from __future__ import annotations

import base64
import math
from dataclasses import dataclass

import numpy as np

from lib.audio import Audio, encode_flac
from lib.prompts import make_music_prompt, make_sentence
from lib.protocol import (
    MAX_SECONDS,
    MAX_TEXT_CHARS,
    MusicRequest,
    TTSRequest,
    VCRequest,
)

MODES = {"quick": 5.0, "balanced": 30.0, "full": 60.0}  # seconds of audio per run (seed 000)
CALIBRATION_TEXT = "The quick brown fox jumps over the lazy dog while the band plays on."


@dataclass(frozen=True)
class Workload:
    service: str
    target_seconds: float
    requests: tuple  # one run = these requests, in order


def text_of_length(rng: np.random.Generator, chars: int) -> str:
    """Prompt sentences joined up to about `chars` characters (at least one sentence)."""
    words, length = [], 0
    while length < chars:
        sentence = make_sentence(rng)
        words.append(sentence)
        length += len(sentence) + 1
    return " ".join(words)[: max(1, min(chars, MAX_TEXT_CHARS))].rstrip() or "Hello."


def segments(target_seconds: float, per_request_limit: float) -> list[float]:
    count = max(1, math.ceil(target_seconds / per_request_limit - 1e-9))
    return [target_seconds / count] * count


def speech_segments(target_seconds: float, chars_per_second: float) -> list[int]:
    """Characters per request so each request stays under both the text and the seconds cap."""
    seconds_per_request = min(MAX_SECONDS["tts"], MAX_TEXT_CHARS / chars_per_second)
    return [max(8, round(s * chars_per_second)) for s in segments(target_seconds, seconds_per_request)]


def reference_request_clip(reference: Audio) -> str:
    return base64.b64encode(encode_flac(reference)).decode()


def build(service: str, target_seconds: float, rng: np.random.Generator, *, chars_per_second: float = 15.0,
          reference: Audio | None = None, reference_text: str = "") -> Workload:
    if service == "music":
        requests = tuple(MusicRequest(prompt=make_music_prompt(rng), seconds=round(s, 2), seed=int(rng.integers(2**31)))
                         for s in segments(target_seconds, MAX_SECONDS["music"]))
    elif service == "tts":
        requests = tuple(TTSRequest(text=text_of_length(rng, n), seed=int(rng.integers(2**31)))
                         for n in speech_segments(target_seconds, chars_per_second))
    elif service == "vc":
        if reference is None:
            raise ValueError("a VC workload needs a reference clip")
        clip = reference_request_clip(reference)
        requests = tuple(VCRequest(text=text_of_length(rng, n), reference_text=reference_text,
                                   reference_flac_b64=clip, seed=int(rng.integers(2**31)))
                         for n in speech_segments(target_seconds, chars_per_second))
    else:
        raise ValueError(f"unknown service {service!r}")
    return Workload(service, target_seconds, requests)
