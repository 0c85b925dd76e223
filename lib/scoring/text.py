"""Text normalisation and word error rate for intelligibility.

Both the prompt and Whisper's transcript go through the same normaliser, so
"7 o'clock," and "Seven o'clock" compare equal: lower case, digits spelled
out as words, punctuation dropped (apostrophes inside words are removed so
"o'clock" == "oclock"), whitespace collapsed.
"""
from __future__ import annotations

import re

import jiwer

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"), (100, "hundred"))


def number_words(n: int) -> str:
    """English words for a non-negative integer ("42" -> "forty two")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    for value, name in _SCALES:
        if n >= value:
            head, rest = divmod(n, value)
            return f"{number_words(head)} {name}" + (f" {number_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


def _spell_number(match: re.Match) -> str:
    digits = match.group(0).replace(",", "")
    whole, _, fraction = digits.partition(".")
    words = number_words(int(whole)) if len(whole) <= 12 else " ".join(_ONES[int(d)] for d in whole)
    if fraction:
        words += " point " + " ".join(_ONES[int(d)] for d in fraction)
    return f" {words} "


def normalise_text(text: str) -> str:
    text = text.lower().replace("%", " percent ").replace("&", " and ")
    text = re.sub(r"\d[\d,]*(?:\.\d+)?", _spell_number, text)
    text = re.sub(r"(?<=\w)['’](?=\w)", "", text)
    text = re.sub(r"[^\w\s]|_", " ", text)
    return " ".join(text.split())


def word_error_rate(reference: str, heard: str) -> float:
    """WER of `heard` against `reference` after normalisation, capped at 1."""
    ref, hyp = normalise_text(reference), normalise_text(heard)
    if not ref:
        return 0.0 if not hyp else 1.0
    if not hyp:
        return 1.0
    return min(1.0, float(jiwer.wer(ref, hyp)))
