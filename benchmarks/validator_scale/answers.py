"""The scale study's answers: valid, distinct audio for any request, made in milliseconds.

A bank of real audio per kind (espeak speech of the shipped sentences, procedural music) is made once; an
answer is a splice of short random pieces of it, as long as a right answer to its request would be, chosen
by the request's seed. Every answer passes the gates (length, level, speech for the speech services) and is
a different clip from every other (no near-duplicate of another answer, this round or any earlier one), so
the validator runs every evaluator on every answer, as it would on a subnet of honest miners. What the
answers say is nonsense: their scores are not the point, their cost to judge is.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio, encode_flac

SPEECH, MUSIC = "speech", "music"
PIECE_S = {SPEECH: (0.35, 0.8), MUSIC: (0.8, 2.0)}  # the pieces an answer is spliced from, seconds
FADE_S = 0.005
SPEECH_PER_CHAR_S = 1 / 15.0  # a right answer's length: the services' own speaking rate
TOLERANCE = 0.03  # a pre-made answer serves a request within this share of the length it needs
BANK_SENTENCES = 24
BANK_MUSIC_S = 90.0
RECYCLED_SEED = 0  # the one splice a recycling miner cuts every answer from
MUSIC_PROMPTS = (
    "calm piano with strings, 72 bpm",
    "upbeat folk with guitar and drums, 118 bpm",
    "dark synth bass and drums, 128 bpm",
    "bright flute and bells over a pad, 96 bpm",
)


@dataclass(frozen=True)
class Bank:
    """One long clip per kind."""

    clips: dict[str, Audio]

    @classmethod
    def make(cls, seed: int = 0) -> Bank:
        from audionet.lib.prompts import make_sentence
        from audionet.models.baselines.espeak import EspeakSynthesizer
        from audionet.models.baselines.synth import ProceduralMusicGenerator

        rng = np.random.default_rng(seed)
        espeak = EspeakSynthesizer()
        spoken = [espeak.synthesize(make_sentence(rng), seed=n) for n in range(BANK_SENTENCES)]
        synth = ProceduralMusicGenerator()
        each = BANK_MUSIC_S / len(MUSIC_PROMPTS)
        tracks = [synth.generate(p, each, seed=n) for n, p in enumerate(MUSIC_PROMPTS)]
        return cls({SPEECH: _joined(spoken), MUSIC: _joined(tracks)})

    def save(self, folder: str) -> None:
        os.makedirs(folder, exist_ok=True)
        for kind, clip in self.clips.items():
            np.save(os.path.join(folder, f"{kind}-{clip.sample_rate}.npy"), clip.samples)

    @classmethod
    def load(cls, folder: str) -> Bank:
        clips = {}
        for name in os.listdir(folder):
            kind, rate = os.path.splitext(name)[0].rsplit("-", 1)
            clips[kind] = Audio(np.load(os.path.join(folder, name)), int(rate))
        return cls(clips)

    def splice(self, kind: str, seconds: float, seed: int) -> Audio:
        """`seconds` of pieces cut at random from the bank's `kind`, joined with short fades."""
        clip, rng = self.clips[kind], np.random.default_rng(seed)
        rate, low, high = clip.sample_rate, *PIECE_S[kind]
        fade = np.linspace(0.0, 1.0, int(FADE_S * rate), dtype=np.float32)
        pieces, total, want = [], 0, int(seconds * rate)
        while total < want:
            length = int(rng.uniform(low, high) * rate)
            start = int(rng.integers(0, len(clip.samples) - length))
            piece = clip.samples[start : start + length].copy()
            piece[: len(fade)] *= fade
            piece[-len(fade) :] *= fade[::-1]
            pieces.append(piece)
            total += length
        return Audio(np.concatenate(pieces)[:want], rate)


def _joined(clips: list[Audio]) -> Audio:
    rate = clips[0].sample_rate
    return Audio(np.concatenate([c.samples for c in clips]).astype(np.float32), rate)


def kind_and_seconds(request) -> tuple[str, float]:
    """What a right answer to a request of any built-in service is: music of the asked length, or speech as
    long as the text takes to say."""
    seconds = getattr(request, "seconds", None)
    if seconds is not None:
        return MUSIC, float(seconds)
    return SPEECH, max(1.0, len(request.text) * SPEECH_PER_CHAR_S)


def answer(bank: Bank, request) -> Audio:
    """A valid answer to `request`, spliced now."""
    kind, seconds = kind_and_seconds(request)
    return bank.splice(kind, seconds, request.seed)


class Premade:
    """Answers spliced and FLAC-encoded ahead, each served once: a request takes the unused one closest to
    the length it needs (within TOLERANCE), or gets one spliced now when none is left that close."""

    def __init__(self, bank: Bank, count: int, seed: int = 0):
        from audionet.lib.prompts import make_sentence
        from audionet.lib.services import MUSIC as MUSIC_SERVICE

        rng = np.random.default_rng(seed)
        lengths = {
            SPEECH: [max(1.0, len(make_sentence(rng)) * SPEECH_PER_CHAR_S) for _ in range(2 * count)],  # tts + vc
            MUSIC: [MUSIC_SERVICE.draw(rng).seconds for _ in range(count)],
        }
        self.bank = bank
        self.pools: dict[str, list[tuple[float, bytes]]] = {
            kind: sorted((s, encode_flac(bank.splice(kind, s, int(rng.integers(2**31))))) for s in wanted)
            for kind, wanted in lengths.items()
        }

    def take(self, kind: str, seconds: float) -> Optional[bytes]:
        pool = self.pools[kind]
        at = bisect.bisect_left(pool, (seconds, b""))
        near = [i for i in (at - 1, at) if 0 <= i < len(pool)]
        best = min(near, key=lambda i: abs(pool[i][0] - seconds), default=None)
        if best is None or abs(pool[best][0] - seconds) > TOLERANCE * seconds:
            return None
        return pool.pop(best)[1]

    def flac(self, request) -> bytes:
        kind, seconds = kind_and_seconds(request)
        return self.take(kind, seconds) or encode_flac(self.bank.splice(kind, seconds, request.seed))

    def recycled(self, request) -> bytes:
        """The same splice whatever the request, cut to the length it needs: a miner that sends old audio."""
        kind, seconds = kind_and_seconds(request)
        return encode_flac(self.bank.splice(kind, seconds, RECYCLED_SEED))
