"""What the speech services (TTS, voice clone) share beyond their base class (`SpeechService`, with the length
check of their text, is in lib/services/base.py): the parts of their score that judge speech (naturalness,
intelligibility, the content penalty), and texts sized to a target length for benchmark workloads.

A target longer than one request allows (30 s of audio; 400 characters of
text) becomes equal segments that a benchmark run generates back to back.
"""

from __future__ import annotations

import numpy as np

from audionet.lib.core.protocol import MAX_TEXT_CHARS
from audionet.lib.prompts import make_sentence
from audionet.lib.scoring.declaration import Ceiling, Part, Penalty, Range
from audionet.lib.services.base import split_seconds

# Naturalness: a mix of the loaded MOS predictors' scores, each over its own range (fooling one is not
# enough). DistillMOS: espeak ~2.35, 8 kHz band-limited speech ~2.85, Kokoro ~4.2, human recordings
# 4.2-4.5; UTMOS: noise ~1.3, clean read speech and good TTS ~4.0-4.4; DNSMOS OVRL, a noise-suppression
# metric blind to bandwidth (8 kHz speech ties full band): white noise ~1.1, clean speech ~3.5-4, so it
# counts a third as much as each learned predictor (docs/scoring.md#naturalness).
MOS_RANGES = {"mos_distillmos": Range(2.0, 4.3), "mos_utmos": Range(1.5, 4.3), "mos_dnsmos": Range(1.0, 4.0)}
MOS_MIX = {"mos_distillmos": 3.0, "mos_utmos": 3.0, "mos_dnsmos": 1.0}
# Every MOS predictor above is a public network that gradient ascent drives to its top with a perturbation
# 40 dB below the speech (docs/scoring.md#judges-that-cannot-be-bought). The naturalness student
# (models/eval/robust_mos.py), which such a perturbation barely moves, caps their mix: trained to put natural
# engines at 4.5 or more and robotic ones at 1.0 or less, its ceiling gives nothing below 2.0 and never binds
# above 3.5, a margin of a whole MOS on either side of what it was taught; the slack absorbs the rest.
NATURALNESS_CEILING = Ceiling({"mos_student": Range(2.0, 3.5)}, slack=0.05)
INTELLIGIBLE = Range(1.0, 0.0)  # word error rate: 0 is every word heard, 1 none
# The content penalty: an answer that does not say the text is worth nothing, however natural it sounds.
# It starts at WER 0.7, so the offline ASR's errors on honest speech cost nothing (honest Kokoro reaches
# WER 0.71 under Whisper tiny.en on names and currencies), and is total at 1.
CONTENT = Penalty("content", "wer", Range(0.7, 1.0))
SPEECH_GATES = ("missing", "length", "silent", "clipped", "no_speech", "duplicate")


def naturalness(weight: float, gate: float = 0.0) -> Part:
    return Part("naturalness", weight, MOS_RANGES, mix=MOS_MIX, ceiling=NATURALNESS_CEILING, gate=gate)


def intelligibility(weight: float) -> Part:
    return Part("intelligibility", weight, {"wer": INTELLIGIBLE})


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
