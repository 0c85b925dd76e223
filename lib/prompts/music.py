"""Music prompts: shipped genre descriptions and templates, with a fresh tempo each round.

Each `[genre low-high]` section of music_descriptions.txt gives a bpm range; a
prompt draws a bpm inside it and states it as "N bpm", a tempo word, or both.
`MusicPrompt` carries the genre and tempo so scoring can check, e.g., onset
regularity against the requested bpm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from audionet.lib.core.errors import ConfigError
from audionet.lib.prompts.sets import check_slots, fill_slots, pick, read_json, read_sections

DESCRIPTIONS_FILE, SLOTS_FILE = "music_descriptions.txt", "music_slots.json"
TEMPLATE_SHARE = 0.3  # share of prompts built from the templates instead of a written description
EXTRA_SHARE = 0.3  # share that gets a production detail appended
KEY_SHARE = 0.25  # share of key-less lines that get a key


@dataclass(frozen=True)
class Genre:
    name: str
    low_bpm: int
    high_bpm: int
    descriptions: tuple[str, ...]


@dataclass(frozen=True)
class MusicPrompt:
    text: str
    genre: str
    bpm: int | None  # stated in the text, or None when only a tempo word is given
    tempo_word: str  # slow ... very fast, always consistent with the drawn bpm
    source: str  # "description" or "template"


@cache
def genres() -> tuple[Genre, ...]:
    slots = read_json(SLOTS_FILE)
    known = {key for key in slots if not key.startswith("_")} | {"tempo", "genre"}
    found = []
    for header, lines in read_sections(DESCRIPTIONS_FILE):
        name, _, bpm_range = header.rpartition(" ")
        try:
            low, high = (int(part) for part in bpm_range.split("-"))
        except ValueError:
            raise ConfigError(f"prompt file {DESCRIPTIONS_FILE}: header [{header}] needs 'genre low-high'") from None
        check_slots(DESCRIPTIONS_FILE, lines, known)
        found.append(Genre(name, low, high, lines))
    check_slots(SLOTS_FILE, slots["templates"], known)
    return tuple(found)


def all_descriptions() -> list[tuple[str, str]]:
    """Every shipped description as (genre, line)."""
    return [(genre.name, line) for genre in genres() for line in genre.descriptions]


def tempo_word(bpm: int) -> str:
    return next(word for top, word in read_json(SLOTS_FILE)["tempo_words"] if bpm < top)


def _tempo_phrase(rng: np.random.Generator, bpm: int) -> tuple[str, int | None]:
    form = rng.random()
    if form < 0.4:
        return f"{bpm} bpm", bpm
    if form < 0.6:
        return f"around {bpm} bpm", bpm
    if form < 0.8:
        return f"{tempo_word(bpm)}, {bpm} bpm", bpm
    return tempo_word(bpm), None


STATED_BPM = re.compile(r"\b(\d{2,3}) bpm\b", re.IGNORECASE)


def stated_bpm(text: str) -> int | None:
    """The bpm a prompt asks for, read back from its text (the scorer sees only the request)."""
    match = STATED_BPM.search(text)
    return int(match.group(1)) if match else None


def make_music_request_text(rng: np.random.Generator) -> MusicPrompt:
    slots = read_json(SLOTS_FILE)
    genre = pick(rng, genres())
    use_template = rng.random() < TEMPLATE_SHARE
    line = pick(rng, slots["templates"] if use_template else genre.descriptions)
    bpm = int(rng.integers(genre.low_bpm, genre.high_bpm + 1))
    tempo, asked_bpm = _tempo_phrase(rng, bpm)
    if "{tempo}" not in line:
        line += ", {tempo}"
    if "{key}" not in line and rng.random() < KEY_SHARE:
        line = line.replace("{tempo}", "in {key}, {tempo}")

    def draw(base, used):
        if base == "tempo":
            return tempo
        if base == "genre":
            return genre.name
        return pick(rng, slots[base], avoid=used)

    text = fill_slots(line, draw)
    if rng.random() < EXTRA_SHARE:
        text += ", " + pick(rng, slots["extra"])
    return MusicPrompt(
        text=text,
        genre=genre.name,
        bpm=asked_bpm,
        tempo_word=tempo_word(bpm),
        source="template" if use_template else "description",
    )
