"""Round prompts with fresh randomness, so answers cannot be cached.

A starter set: the scoring issue replaces these lists with large shipped
prompt files; the generator interface (`make_*` with an rng) stays.
"""
from __future__ import annotations

import numpy as np

NAMES = ["Alice", "Marcus", "Priya", "Jonas", "Mei", "Olu", "Sofia", "Tomas", "Hana", "Diego"]
PLACES = ["the harbour", "the library", "the old mill", "the train station", "the market", "the hills"]
TTS_TEMPLATES = [
    "{name} walked to {place} at {hour} o'clock and waited for the rain to stop.",
    "Please call {name} before {hour} tomorrow; the meeting moved to {place}.",
    "The forecast promises {number} millimetres of rain over {place} tonight.",
    "{name} counted {number} boats drifting slowly past {place}.",
    "It is never too late to learn something new, said {name} with a smile.",
    "After {number} days of travel, {name} finally reached {place}.",
    "Bright sunlight filled {place} as {name} opened the window.",
    "Our train leaves from {place} at {hour} thirty, so pack light.",
]
GENRES = ["ambient", "jazz", "folk", "lo-fi", "electronic", "cinematic", "rock", "classical"]
MOODS = ["happy", "sad", "calm", "dark", "uplifting", "tense", "melancholic", "energetic"]
INSTRUMENTS = ["piano", "guitar", "strings", "synth", "flute", "bells", "bass and drums", "pad"]
TEMPO_WORDS = ["slow", "mid-tempo", "upbeat", "fast"]


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def make_sentence(rng: np.random.Generator) -> str:
    return _pick(rng, TTS_TEMPLATES).format(
        name=_pick(rng, NAMES), place=_pick(rng, PLACES), hour=int(rng.integers(1, 13)),
        number=int(rng.integers(2, 99)),
    )


def make_music_prompt(rng: np.random.Generator) -> str:
    tempo = f"{int(rng.integers(60, 150))} bpm" if rng.random() < 0.5 else _pick(rng, TEMPO_WORDS)
    return f"{_pick(rng, MOODS)} {_pick(rng, GENRES)} with {_pick(rng, INSTRUMENTS)}, {tempo}"


def make_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**32 - 1))
