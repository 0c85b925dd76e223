"""The shipped prompt files (lib/prompts/data), read once through importlib.resources.

Both sentence files use the same reviewable format: `[header]` lines open a
section, `#` lines are comments, every other non-blank line is one prompt
(possibly with `{slot}` placeholders). A header may repeat; its lines merge.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from audionet.lib.core.errors import ConfigError

SLOT = re.compile(r"\{([a-z_]+?)(\d?)\}")
# "a" before a vowel sound, for slot values like "a {mood} piece" -> "an eerie piece";
# "u" words that start with a "you" sound (ukulele, unique, euro, one-way) keep "a".
A_BEFORE_VOWEL = re.compile(r"\b([Aa]) (?=(?!uk|uni|use|eu|one)[aeiouAEIOU])")


def read_text(name: str) -> str:
    return resources.files("audionet.lib.prompts").joinpath("data", name).read_text(encoding="utf-8")


@cache
def read_json(name: str) -> dict:
    return json.loads(read_text(name))


@cache
def read_sections(name: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(header, lines) pairs in file order, repeated headers merged."""
    sections: dict[str, list[str]] = {}
    header = None
    for number, raw in enumerate(read_text(name).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            header = line[1:-1].strip()
            sections.setdefault(header, [])
        elif header is None:
            raise ConfigError(f"prompt file {name}: line {number} comes before any [section] header")
        else:
            sections[header].append(line)
    return tuple((key, tuple(lines)) for key, lines in sections.items())


def slot_names(text: str) -> list[str]:
    """Base names of the slots in `text`: '{name2}' -> 'name'."""
    return [match.group(1) for match in SLOT.finditer(text)]


def check_slots(name: str, lines, known) -> None:
    """Fail at load, with the file and line, if a template uses a slot nobody fills."""
    for line in lines:
        unknown = sorted(set(slot_names(line)) - set(known))
        if unknown:
            raise ConfigError(f"prompt file {name}: unknown slot(s) {unknown} in {line!r}")
        if "{" in SLOT.sub("", line) or "}" in SLOT.sub("", line):
            raise ConfigError(f"prompt file {name}: stray brace in {line!r}")


def fill_slots(text: str, draw) -> str:
    """Replace each {slot} with draw(base, used), where `used` lists the values this
    prompt already took for that base, so {name} and {name2} differ."""
    used: dict[str, list[str]] = {}

    def one(match: re.Match) -> str:
        base = match.group(1)
        value = draw(base, used.setdefault(base, []))
        used[base].append(value)
        return value

    return A_BEFORE_VOWEL.sub(r"\1n ", SLOT.sub(one, text))


def pick(rng, items, avoid=()):
    """A uniformly drawn item not in `avoid` (when the list allows)."""
    choices = [item for item in items if item not in avoid] or list(items)
    return choices[int(rng.integers(len(choices)))]
