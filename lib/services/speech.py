"""What the speech services (TTS, voice clone) share: the parts of their score that judge speech
(naturalness, intelligibility, the content penalty), the length of speech a text asks for (and the refusal of text that cannot be spoken
within the limit), and texts sized to a target length for benchmark workloads.

How long a text takes to say is measured, not guessed from its characters: espeak-ng reads it at its
fastest seeded rate (185 words a minute), expanding whatever the text holds (CJK, symbols, e-mail
addresses, URLs, Roman numerals, maths) the way its text rules do, and the count stops just past the
limit (about 2 ms per second of speech). Kokoro uses the same espeak-ng front end and measured 0.9-1.3x
that length on such texts.

A target longer than one request allows (30 s of audio; 400 characters of
text) becomes equal segments that a benchmark run generates back to back.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Optional

import numpy as np

from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import MAX_TEXT_CHARS, speech_seconds
from audionet.lib.prompts import make_sentence
from audionet.lib.scoring.declaration import Ceiling, Part, Penalty, Range
from audionet.lib.services.base import Service, split_seconds
from audionet.models.baselines.espeak import EspeakSynthesizer

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
NATURALNESS_CEILING = Ceiling("mos_student", Range(2.0, 3.5), slack=0.05)
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


def check_speakable(text: str, max_seconds: float) -> float:
    """The seconds espeak-ng takes to say `text` at its fastest rate; refuse (400) text with nothing to speak
    (or that it says nothing for: fullwidth or circled digits, say), or that takes longer than `max_seconds`:
    the caller's mistake, decided before any generation, is never a 500."""
    # a letter or digit, as written: rewriting digits as words (`prompts.spoken_form`) neither adds nor removes one
    if not any(ch.isalnum() for ch in text):
        raise WireError("the text has nothing to speak: no letters or digits")
    seconds = EspeakSynthesizer().spoken_seconds(text, max_seconds)
    MEASURED.add(text, seconds)
    if seconds == 0:
        raise WireError("the text has nothing to speak: it reads as silence")
    if seconds > max_seconds:
        raise WireError(f"the text takes more than {max_seconds:g} s to say; the limit is {max_seconds:g} s")
    return seconds


class Measured:
    """The spoken seconds the length check measured for its last `size` texts: the miner's scheduler
    plans with the same figure a moment later, without measuring again on the event loop."""

    def __init__(self, size: int = 256):
        self.size, self.seconds = size, OrderedDict()
        self.lock = threading.Lock()  # parsing runs in worker threads

    def add(self, text: str, seconds: float) -> None:
        with self.lock:
            self.seconds[text] = seconds
            while len(self.seconds) > self.size:
                self.seconds.popitem(last=False)

    def get(self, text: str) -> Optional[float]:
        with self.lock:
            return self.seconds.get(text)


MEASURED = Measured()


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


class SpeechService(Service):
    """A service whose answer speaks `request.text`."""

    def check(self, request) -> None:
        check_speakable(request.text, self.max_seconds)  # a 400 before any generation

    def expected_seconds(self, request) -> tuple[float, float]:
        return speech_seconds(request.text)

    def planned_seconds(self, request) -> float:
        """At least what the length check measured, when it did: text in other scripts, symbols and numbers
        speaks far longer than its characters suggest."""
        return max(super().planned_seconds(request), MEASURED.get(request.text) or 0.0)
