"""Round prompts with fresh randomness, so answers cannot be cached.

The prompt sets ship as reviewable text in lib/prompts/data (written for this
project): TTS sentences by difficulty with {slot} templates, and music
descriptions by genre with a bpm range. Every draw refills names, numbers,
places and tempos from the caller's rng, so a seeded validator is reproducible
and an unseeded one never repeats itself in practice.
"""

from __future__ import annotations

import numpy as np

from audionet.lib.prompts.music import (
    MusicPrompt,
    all_descriptions,
    make_music_request_text,
    stated_bpm,
)
from audionet.lib.prompts.spoken import normalise_for_wer, spoken_form
from audionet.lib.prompts.tts import TTSPrompt, all_sentences, make_tts_prompt

__all__ = [
    "MusicPrompt",
    "TTSPrompt",
    "all_descriptions",
    "all_sentences",
    "make_music_prompt",
    "make_music_request_text",
    "make_seed",
    "make_sentence",
    "make_tts_prompt",
    "normalise_for_wer",
    "spoken_form",
    "stated_bpm",
]


def make_sentence(rng: np.random.Generator) -> str:
    return make_tts_prompt(rng).text


def make_music_prompt(rng: np.random.Generator) -> str:
    return make_music_request_text(rng).text


def make_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**32 - 1))
