"""What transcribed notes say about a clip as music: pure functions of notes (numpy only).

Notes come from a note transcriber (models/eval/basic_pitch.py): anything with `pitch` (MIDI),
`onset_s`, `offset_s` and `confidence`. Each note weighs by its duration times its confidence, so
the short, faint notes a transcriber invents from harmonics count for little.

* the pitch-class histogram and the key by the Krumhansl-Schmuckler method: the histogram's
  correlation with the Krumhansl-Kessler major and minor key profiles in all 12 rotations;
* key stability: the share of windows whose own key is the clip's key (or its relative, which has
  the same notes); a piece keeps its key, random chords every beat do not;
* chords: per window, the share of its weight inside the best-fitting major or minor triad, and
  how often that best triad changes (a held chord never does);
* how a key named in a prompt ("B flat major", "F# minor") fits the notes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

# Krumhansl & Kessler (1982) probe-tone ratings, tonic first.
MAJOR_PROFILE = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
MINOR_PROFILE = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])
NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
MODES = ("major", "minor")
TRIADS = {"major": (0, 4, 7), "minor": (0, 3, 7)}
LETTERS = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}
KEY_WORDS = re.compile(r"\b([a-g])(\s*[#♯♭]|b|\s+sharp|\s+flat)?[\s-]*(major|minor|maj|min)\b", re.IGNORECASE)
ACCIDENTALS = {"#": 1, "♯": 1, "sharp": 1, "b": -1, "♭": -1, "flat": -1}
WINDOW_S, HOP_S = 4.0, 2.0  # key windows: a few bars at common tempi
CHORD_WINDOW_S = 0.5  # chord windows: about a beat


class NoteLike(Protocol):
    @property
    def pitch(self) -> int: ...
    @property
    def onset_s(self) -> float: ...
    @property
    def offset_s(self) -> float: ...
    @property
    def confidence(self) -> float: ...


@dataclass(frozen=True)
class Key:
    tonic: int  # pitch class, 0 = C
    mode: str  # "major" or "minor"

    @property
    def name(self) -> str:
        return f"{NAMES[self.tonic]} {self.mode}"

    @property
    def relative_major(self) -> int:
        """Tonic of the major key with the same notes (A minor -> C)."""
        return self.tonic if self.mode == "major" else (self.tonic + 3) % 12


def pitch_class_histogram(notes: Sequence[NoteLike], start_s: float = 0.0, end_s: float = np.inf) -> np.ndarray:
    """Weight per pitch class (C first) of the notes' parts inside [start_s, end_s), summing to 1
    (all zeros when no note sounds there)."""
    histogram = np.zeros(12)
    for note in notes:
        overlap = min(note.offset_s, end_s) - max(note.onset_s, start_s)
        if overlap > 0:
            histogram[int(note.pitch) % 12] += overlap * max(0.0, float(note.confidence))
    total = histogram.sum()
    return histogram / total if total > 0 else histogram


def key_correlations(histogram: np.ndarray) -> np.ndarray:
    """(2, 12) Pearson correlation of the histogram with each key's profile: [mode, tonic]; zeros for
    a flat or empty histogram (no key)."""
    if np.ptp(histogram) == 0:
        return np.zeros((2, 12))
    out = np.empty((2, 12))
    for m, profile in enumerate((MAJOR_PROFILE, MINOR_PROFILE)):
        for tonic in range(12):
            out[m, tonic] = np.corrcoef(histogram, np.roll(profile, tonic))[0, 1]
    return out


def estimate_key(histogram: np.ndarray) -> tuple[Key | None, float]:
    """The best-fitting key and its correlation (-1..1); (None, 0.0) when there are no notes."""
    correlations = key_correlations(histogram)
    if not correlations.any():
        return None, 0.0
    mode, tonic = np.unravel_index(int(np.argmax(correlations)), correlations.shape)
    return Key(int(tonic), MODES[int(mode)]), float(correlations[mode, tonic])


def key_fit(histogram: np.ndarray, key: Key) -> float:
    """Correlation (-1..1) of the histogram with `key`'s profile (0 without notes)."""
    return float(key_correlations(histogram)[MODES.index(key.mode), key.tonic])


def fifths_apart(a: Key, b: Key) -> int:
    """Steps (0..6) round the circle of fifths between the two keys' note sets (relative keys: 0)."""
    steps = ((a.relative_major - b.relative_major) * 7) % 12
    return min(steps, 12 - steps)


def key_match(stated: Key, found: Key | None) -> float:
    """1 for the stated key, 0.75 for its relative (same notes, other tonic), 0.5 one fifth away,
    0.25 two, 0 further or without notes."""
    if found is None:
        return 0.0
    steps = fifths_apart(stated, found)
    if steps == 0:
        return 1.0 if stated == found else 0.75
    return max(0.0, 0.5 - 0.25 * (steps - 1))


def parse_key(text: str) -> Key | None:
    """The first key a text names ("in B flat major", "F# minor", "Eb maj"), or None."""
    match = KEY_WORDS.search(text)
    if not match:
        return None
    letter, accidental, mode = match.groups()
    shift = ACCIDENTALS.get((accidental or "").strip().lower(), 0)
    return Key((LETTERS[letter.lower()] + shift) % 12, "major" if mode.lower().startswith("maj") else "minor")


def _windows(seconds: float, width: float, hop: float) -> list[tuple[float, float]]:
    if seconds <= width:
        return [(0.0, max(seconds, 1e-9))]
    return [(start, start + width) for start in np.arange(0.0, seconds - width + 1e-9, hop)]


def key_stability(notes: Sequence[NoteLike], seconds: float, window_s: float = WINDOW_S, hop_s: float = HOP_S) -> float:
    """Share (0..1) of the windows with notes whose own key has the clip's notes (the clip's key or its
    relative); 0 without notes."""
    key, _ = estimate_key(pitch_class_histogram(notes))
    if key is None:
        return 0.0
    found = [estimate_key(pitch_class_histogram(notes, a, b))[0] for a, b in _windows(seconds, window_s, hop_s)]
    keyed = [k for k in found if k is not None]
    return sum(fifths_apart(k, key) == 0 for k in keyed) / len(keyed) if keyed else 0.0


def best_triad(histogram: np.ndarray) -> tuple[Key | None, float]:
    """The major or minor triad holding the largest share of the histogram, and that share (0..1)."""
    if not histogram.any():
        return None, 0.0
    shares = {
        Key(root, mode): float(sum(histogram[(root + i) % 12] for i in TRIADS[mode]))
        for mode in MODES
        for root in range(12)
    }
    chord = max(shares, key=shares.__getitem__)
    return chord, shares[chord]


def chord_measures(notes: Sequence[NoteLike], seconds: float, window_s: float = CHORD_WINDOW_S) -> dict[str, float]:
    """`triad_share`: mean share of a window's notes inside its best triad (windows with notes);
    `chord_changes_per_min`: how often the best triad changes from one such window to the next."""
    found = [best_triad(pitch_class_histogram(notes, a, b)) for a, b in _windows(seconds, window_s, window_s)]
    found = [(chord, share) for chord, share in found if chord is not None]
    if not found:
        return {"triad_share": 0.0, "chord_changes_per_min": 0.0}
    changes = sum(a[0] != b[0] for a, b in zip(found, found[1:]))
    return {
        "triad_share": float(np.mean([share for _, share in found])),
        "chord_changes_per_min": 60.0 * changes / max(seconds, 1e-9),
    }


def summary(notes: Sequence[NoteLike], seconds: float) -> dict[str, float]:
    """Every measure of this module for one clip, as numbers (the key as its clarity: the best
    correlation; `key_tonic` and `key_minor` say which key, -1 and 0 without notes)."""
    seconds = max(float(seconds), 1e-9)
    histogram = pitch_class_histogram(notes)
    key, clarity = estimate_key(histogram)
    sounding = sum(max(0.0, n.offset_s - n.onset_s) for n in notes)
    return {
        "notes": float(len(notes)),
        "notes_per_s": len(notes) / seconds,
        "distinct_pitches": float(len({int(n.pitch) for n in notes})),
        "pitch_range": float(max((n.pitch for n in notes), default=0) - min((n.pitch for n in notes), default=0)),
        "polyphony": sounding / seconds,  # mean notes sounding at once over the clip
        "key_clarity": clarity,
        "key_tonic": float(key.tonic) if key else -1.0,
        "key_minor": float(key is not None and key.mode == "minor"),
        "key_stability": key_stability(notes, seconds),
        **chord_measures(notes, seconds),
    }
