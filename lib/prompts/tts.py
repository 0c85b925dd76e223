"""TTS prompts: a shipped sentence set, refilled with fresh names and numbers each round.

A line with slots is filled from tts_slots.json and the number drawers below.
A fixed line (and half the one-slot lines) is framed for fresh randomness: quoted after a
drawn speaker ("Mei asked, ...") or followed by a filled template sentence.
Numbers come out as digits or as words at random; `TTSPrompt.spoken` is the
WER reference (lib.prompts.spoken.normalise_for_wer), where both read the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from audionet.lib.prompts.sets import (
    check_slots,
    fill_slots,
    pick,
    read_json,
    read_sections,
    slot_names,
)
from audionet.lib.prompts.spoken import normalise_for_wer, number_words, ordinal_words

SENTENCES_FILE, SLOTS_FILE = "tts_sentences.txt", "tts_slots.json"
MIN_WORDS, MAX_WORDS = 3, 40
CURRENCY_SYMBOLS = ("$", "£", "€")


@dataclass(frozen=True)
class TTSPrompt:
    text: str  # what the miner is asked to say
    spoken: str  # normalised reference transcript for WER
    difficulty: str  # the section of tts_sentences.txt it came from
    template: str  # the shipped line it was made from


def _words_or_digits(rng, n: int, words_share: float = 0.5) -> str:
    return number_words(n).replace(" ", "-") if rng.random() < words_share else str(n)


def _count(rng, used):
    return _words_or_digits(rng, int(rng.integers(2, 100)))


def _small(rng, used):
    return _words_or_digits(rng, int(rng.integers(2, 13)), 0.7)


def _big(rng, used):
    return f"{int(10 ** rng.uniform(2.0, 5.4)):,}"  # commas: never read as a year


def _price(rng, used):
    symbol = used[-1][0] if used else pick(rng, CURRENCY_SYMBOLS)  # one currency per sentence
    whole = int(rng.integers(1, 200))
    return f"{symbol}{whole}.{int(rng.integers(1, 20)) * 5:02d}" if rng.random() < 0.5 else f"{symbol}{whole}"


def _bigprice(rng, used):
    return f"{pick(rng, CURRENCY_SYMBOLS)}{int(10 ** rng.uniform(3.0, 6.3)) // 100 * 100:,}"


def _percent(rng, used):
    n = int(rng.integers(1, 100))
    return f"{n}%" if rng.random() < 0.7 else f"{number_words(n).replace(' ', '-')} percent"


def _decimal(rng, used):
    return f"{rng.uniform(0.5, 99.9):.1f}"


def _year(rng, used):
    if used:  # a second year comes after the first ("built in X and restored in Y")
        return str(min(2025, int(used[-1]) + int(rng.integers(3, 60))))
    return str(int(rng.integers(1850, 2016)))


def _time(rng, used):
    hour, minute = int(rng.integers(1, 13)), int(rng.integers(0, 12)) * 5
    if rng.random() < 0.25:
        return f"{number_words(hour)} o'clock"
    return f"{hour}:{minute:02d}"


def _ordinal_number(rng, top: int = 31) -> str:
    n = int(rng.integers(1, top + 1))
    if rng.random() < 0.4:
        return ordinal_words(n).replace(" ", "-")
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _ordinal(rng, used):
    return _ordinal_number(rng, 20)


def _date(rng, used):
    month, day = pick(rng, read_json(SLOTS_FILE)["month"]), _ordinal_number(rng, 28)
    return f"the {day} of {month}" if rng.random() < 0.3 else f"{month} {day}"


NUMBER_SLOTS = {
    "count": _count,
    "small": _small,
    "big": _big,
    "price": _price,
    "bigprice": _bigprice,
    "percent": _percent,
    "decimal": _decimal,
    "year": _year,
    "time": _time,
    "ordinal": _ordinal,
    "date": _date,
}


@cache
def sentence_sets() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(difficulty, lines) from the shipped file, with every slot checked."""
    sections = read_sections(SENTENCES_FILE)
    known = set(NUMBER_SLOTS) | {key for key in read_json(SLOTS_FILE) if not key.startswith("_")}
    for _, lines in sections:
        check_slots(SENTENCES_FILE, lines, known)
    return sections


def all_sentences() -> list[tuple[str, str]]:
    """Every shipped line as (difficulty, line)."""
    return [(tag, line) for tag, lines in sentence_sets() for line in lines]


def fill(rng: np.random.Generator, line: str) -> str:
    lists = read_json(SLOTS_FILE)

    def draw(base, used):
        if base in NUMBER_SLOTS:
            return NUMBER_SLOTS[base](rng, used)
        return pick(rng, lists[base], avoid=used)

    return fill_slots(line, draw)


@cache
def _templated_plain() -> tuple[str, ...]:
    return tuple(line for tag, line in all_sentences() if tag == "plain" and slot_names(line))


def _frame(rng: np.random.Generator, line: str) -> str:
    """Give a line with little randomness more: a drawn speaker, or a filled sentence after it."""
    if '"' not in line and rng.random() < 0.6:
        verb = "asked" if line.endswith("?") else "said"
        when = "On {weekday}, " if rng.random() < 0.4 else ""
        return fill(rng, f'{when}{{name}} {{{verb}}}, "{line}"')
    return f"{fill(rng, line)} {fill(rng, pick(rng, _templated_plain()))}"


def make_tts_prompt(rng: np.random.Generator, max_words: int = MAX_WORDS) -> TTSPrompt:
    """A fresh TTS prompt of MIN_WORDS..max_words words (retrying the draw if too long)."""
    lines = all_sentences()
    for _ in range(100):
        tag, line = lines[int(rng.integers(len(lines)))]
        slots = len(slot_names(line))  # a fixed line, or one slot only, gets framed
        text = _frame(rng, line) if slots == 0 or slots == 1 and rng.random() < 0.5 else fill(rng, line)
        if MIN_WORDS <= len(text.split()) <= max_words:
            return TTSPrompt(text=text, spoken=normalise_for_wer(text), difficulty=tag, template=line)
    raise ValueError(f"no prompt of at most {max_words} words after 100 draws")
