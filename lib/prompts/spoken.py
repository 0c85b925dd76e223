"""Numbers as a listener hears them, for word error rate.

Prompts write numbers either as digits ("42", "$3.50", "7:30", "45%", "3rd",
"1987") or as words ("forty-two"); Whisper may transcribe either way. Both the
prompt and the transcript go through `spoken_form`, which rewrites every digit
form we generate into words, so "$3.50" and "three dollars fifty cents" score
the same. `normalise_for_wer` adds lower case, "&" as "and", no punctuation or
apostrophes, hyphens as spaces and single spaces: the one normaliser WER is
computed with (prompt and transcript alike).
"""

from __future__ import annotations

import re

ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"), (100, "hundred"))
ORDINAL_WORDS = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
CURRENCIES = {
    "$": ("dollar", "dollars", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "€": ("euro", "euros", "cent", "cents"),
}

_CURRENCY = re.compile(r"([$£€])(\d[\d,]*)(?:\.(\d{2}))?")
_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PERCENT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s?%")
_ORDINAL = re.compile(r"\b(\d[\d,]*)(st|nd|rd|th)\b")
_DECIMAL = re.compile(r"\b(\d[\d,]*)\.(\d+)\b")
_NUMBER = re.compile(r"\b\d[\d,]*\b")


def number_words(n: int) -> str:
    """Cardinal in words, without "and" or hyphens: 1205 -> 'one thousand two hundred five'."""
    if n < 0:
        return "minus " + number_words(-n)
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10] + ("" if n % 10 == 0 else " " + ONES[n % 10])
    for size, name in SCALES:
        if n >= size:
            rest = n % size
            return f"{number_words(n // size)} {name}" + ("" if rest == 0 else " " + number_words(rest))
    raise AssertionError("unreachable")


def ordinal_words(n: int) -> str:
    words = number_words(n).split()
    last = words[-1]
    if last in ORDINAL_WORDS:
        words[-1] = ORDINAL_WORDS[last]
    elif last.endswith("y"):
        words[-1] = last[:-1] + "ieth"
    else:
        words[-1] = last + "th"
    return " ".join(words)


def year_words(n: int) -> str:
    """1987 -> 'nineteen eighty seven', 2005 -> 'two thousand five', 2024 -> 'twenty twenty four'."""
    high, low = divmod(n, 100)
    if 2000 <= n < 2010 or low == 0 and high % 10 == 0:
        return number_words(n)
    if low == 0:
        return number_words(high) + " hundred"
    return number_words(high) + " " + ("oh " + ONES[low] if low < 10 else number_words(low))


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _digits(text: str) -> str:
    return " ".join(ONES[int(d)] for d in text)


def _currency(match: re.Match) -> str:
    one, many, small_one, small_many = CURRENCIES[match.group(1)]
    whole = _int(match.group(2))
    words = f"{number_words(whole)} {one if whole == 1 else many}"
    if match.group(3) and int(match.group(3)):
        cents = int(match.group(3))
        words += f" {number_words(cents)} {small_one if cents == 1 else small_many}"
    return words


def _time(match: re.Match) -> str:
    hour, minute = int(match.group(1)), int(match.group(2))
    if minute == 0:
        return f"{number_words(hour)} o'clock"
    return f"{number_words(hour)} {'oh ' if minute < 10 else ''}{number_words(minute)}"


def _plain_number(match: re.Match) -> str:
    text = match.group(0)
    if "," not in text and len(text) == 4 and 1100 <= int(text) <= 2099:
        return year_words(int(text))
    return number_words(_int(text))


def spoken_form(text: str) -> str:
    """Rewrite digit forms (currency, times, percents, ordinals, decimals, years, integers) as words."""
    text = _CURRENCY.sub(_currency, text)
    text = _TIME.sub(_time, text)
    text = _PERCENT.sub(lambda m: spoken_form(m.group(1)) + " percent", text)
    text = _ORDINAL.sub(lambda m: ordinal_words(_int(m.group(1))), text)
    text = _DECIMAL.sub(lambda m: f"{number_words(_int(m.group(1)))} point {_digits(m.group(2))}", text)
    return _NUMBER.sub(_plain_number, text)


_NOT_WORD = re.compile(r"[^\w' ]+|_")  # \w keeps accented letters: "Bergström" stays one word


def normalise_for_wer(text: str) -> str:
    """Lower case, numbers as words, "&" as "and", punctuation and hyphens as spaces, apostrophes dropped
    (Whisper writes both "O'Clock" and "oclock"), one space between words."""
    text = spoken_form(text.replace("\u2019", "'").replace("&", " and ")).lower()
    text = _NOT_WORD.sub(" ", text.replace("-", " ")).replace("'", "")
    return " ".join(text.split())
