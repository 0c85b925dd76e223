"""Offline music baseline: a small procedural synthesiser steered by the prompt.

The prompt is read for tempo ("120 bpm", or words like slow/upbeat), mood
(major for happy/bright words, minor for sad/dark ones) and instruments
(piano, guitar, bass, drums, strings, pad, synth, flute, bells; default
piano + bass + drums). A seeded generator then picks the key, a chord
progression for the mood, and a melody from the scale, and every note is
rendered with a simple but distinct timbre (`timbres.py`). It is not
good music; it is real, prompt-dependent audio with no model weights.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.models.base import MusicGenerator
from audionet.models.baselines.timbres import DRUMS, SAMPLE_RATE, TIMBRES, drum_hit

__all__ = ["SAMPLE_RATE", "MusicPlan", "ProceduralMusicGenerator", "plan_music"]

MAX_SECONDS = 60.0
PEAK = 10 ** (-1 / 20)  # -1 dBFS
SR = SAMPLE_RATE

_INSTRUMENT_WORDS = {
    "piano": "piano|keys|keyboard",
    "guitar": "guitars?",
    "bass": "bass",
    "drums": "drums?|beat|percussion",
    "strings": "strings?|violins?|cellos?|orchestra|orchestral",
    "pad": "pads?",
    "synth": "synths?|synthesi[sz]ers?|electronic",
    "flute": "flutes?|woodwind",
    "bells": "bells?|chimes?|glockenspiel",
}
_SLOW = {"slow", "calm", "ambient", "relaxing", "chill", "peaceful", "gentle", "lullaby", "sleepy", "soft"}
_FAST = {"upbeat", "energetic", "fast", "dance", "driving", "party", "edm", "intense", "rock"}
_MAJOR = {"happy", "bright", "uplifting", "joyful", "cheerful", "sunny", "hopeful", "triumphant", "playful"}
_MINOR = {
    "sad",
    "dark",
    "melancholic",
    "melancholy",
    "tense",
    "gloomy",
    "somber",
    "sombre",
    "moody",
    "eerie",
    "mysterious",
}
_SCALES = {"major": [0, 2, 4, 5, 7, 9, 11], "minor": [0, 2, 3, 5, 7, 8, 10]}
# Chord roots as scale degrees, four bars each (I-V-vi-IV, i-VI-III-VII, ...).
_PROGRESSIONS = {
    "major": [[0, 4, 5, 3], [0, 5, 3, 4], [0, 3, 4, 3], [3, 4, 0, 5]],
    "minor": [[0, 5, 2, 6], [0, 3, 4, 0], [0, 5, 3, 4], [0, 6, 5, 4]],
}
# Melody onsets within a bar, in beats; the last two are busy, for fast tempi only.
_RHYTHMS = [
    [0, 1, 2, 3],
    [0, 1.5, 2, 3],
    [0, 0.5, 1, 2, 3],
    [0, 2],
    [0, 2, 3],
    [0, 1, 1.5, 2, 3],
    [0, 0.5, 1, 1.5, 2, 3],
]
_GAIN = {
    "piano": 0.5,
    "guitar": 0.5,
    "bass": 0.55,
    "strings": 0.25,
    "pad": 0.25,
    "synth": 0.3,
    "flute": 0.45,
    "bells": 0.3,
    "kick": 0.9,
    "snare": 0.5,
    "hat": 0.18,
}


@dataclass(frozen=True)
class MusicPlan:
    tempo_bpm: float
    mode: str  # "major" or "minor"
    instruments: tuple[str, ...]  # in prompt order


def plan_music(prompt: str, seed: int = 0) -> MusicPlan:
    """What the prompt asks for; the seed only fills in what it leaves open."""
    rng = np.random.default_rng(int(seed) % 2**64)
    text = str(prompt).lower()
    words = re.findall(r"[a-z]+", text)
    explicit = re.search(r"(\d{2,3}(?:\.\d+)?)\s*(?:bpm|beats per minute)", text)
    fast, slow = sum(w in _FAST for w in words), sum(w in _SLOW for w in words)
    if explicit:
        tempo = float(np.clip(float(explicit.group(1)), 40, 220))
    elif fast != slow:
        tempo = float(rng.uniform(125, 140) if fast > slow else rng.uniform(70, 85))
    else:
        tempo = float(rng.uniform(95, 105))
    major, minor = sum(w in _MAJOR for w in words), sum(w in _MINOR for w in words)
    mode = ("major" if major > minor else "minor") if major != minor else str(rng.choice(["major", "minor"]))
    found = []
    for name, pattern in _INSTRUMENT_WORDS.items():
        match = re.search(rf"\b(?:{pattern})\b", text)
        if match:
            found.append((match.start(), name))
    instruments = tuple(name for _, name in sorted(found)) or ("piano", "bass", "drums")
    return MusicPlan(tempo, mode, instruments)


_LEADS = ("piano", "guitar", "flute", "synth", "bells", "strings")
_CHORDAL = ("piano", "guitar", "strings", "pad")

Note = tuple[float, float, int, float]  # start s, held s, MIDI pitch, velocity


def _hz(midi: int) -> float:
    return 440.0 * 2 ** ((midi - 69) / 12)


def _compose(plan: MusicPlan, seconds: float, rng) -> dict[str, list[Note]]:
    """Notes per instrument (drums as pseudo-instruments kick/snare/hat)."""
    beat = 60.0 / plan.tempo_bpm
    scale = _SCALES[plan.mode]
    tonic = 57 + int(rng.integers(0, 12))  # melody tonic between A3 and G#4
    progression = _PROGRESSIONS[plan.mode][int(rng.integers(0, 4))]
    n_bars = math.ceil(seconds / (4 * beat)) + 1

    def pitch(degree: int, octave_shift: int = 0) -> int:
        return tonic + 12 * (degree // 7 + octave_shift) + scale[degree % 7]

    lead = next((i for i in plan.instruments if i in _LEADS), None)
    comps = [i for i in plan.instruments if i in _CHORDAL and i != lead]
    if not comps and lead in ("piano", "guitar"):
        comps = [lead]
    fast = plan.tempo_bpm >= 115
    # A four-bar melodic phrase (scale degrees on a beat grid), varied on repeats.
    phrase, degree = [], 7
    for bar in range(4):
        chord_root = progression[bar]
        hits = _RHYTHMS[int(rng.integers(0, len(_RHYTHMS) if fast else len(_RHYTHMS) - 2))]
        for i, at in enumerate(hits):
            degree = int(np.clip(degree + rng.integers(-2, 3), 2, 13))
            if at in (0, 2):  # strong beats land on a chord tone
                degree = min((chord_root + c for c in (0, 2, 4, 7, 9, 11)), key=lambda d: abs(d - degree))
            length = (hits[i + 1] if i + 1 < len(hits) else 4) - at
            phrase.append((bar * 4 + at, length, degree))
    notes: dict[str, list[Note]] = {name: [] for name in list(TIMBRES) + list(DRUMS)}
    for bar in range(n_bars):
        t0, root = bar * 4 * beat, progression[bar % 4]
        chord = [pitch(root + c, -1) for c in (0, 2, 4)]
        if lead:
            for at, length, deg in phrase:
                if at // 4 == bar % 4:
                    if bar >= 4 and rng.random() < 0.25:  # vary the repeats a little
                        deg += int(rng.integers(-1, 2))
                    velocity = 0.8 + 0.2 * rng.random()
                    notes[lead].append((t0 + (at % 4) * beat, length * beat * 0.95, pitch(deg), velocity))
        for comp in comps:
            if comp in ("pad", "strings"):
                notes[comp] += [(t0, 4 * beat, p, 0.7) for p in chord]
            elif comp == "piano":
                hits = range(4) if fast else (0, 2)
                notes[comp] += [(t0 + h * beat, beat * (1 if fast else 2), p, 0.55) for h in hits for p in chord]
            elif fast:  # guitar: strummed on every beat (12 ms between strings)
                notes[comp] += [
                    (t0 + h * beat + j * 0.012, beat, p, 0.5) for h in range(4) for j, p in enumerate(chord)
                ]
            else:  # guitar: arpeggiated eighths
                notes[comp] += [(t0 + e * beat / 2, beat, chord[[0, 1, 2, 1][e % 4]], 0.5) for e in range(8)]
        if "bass" in plan.instruments:
            low = pitch(root, -2)
            if fast:  # driving eighths with an octave jump
                steps = [(e / 2, low + (12 if e % 4 == 3 else 0)) for e in range(8)]
            else:
                steps = [(0, low), (2, low), (3, low + 7)]
            notes["bass"] += [(t0 + at * beat, beat * (0.45 if fast else 0.9), p, 0.9) for at, p in steps]
        if "drums" in plan.instruments:
            notes["kick"] += [(t0 + b * beat, 0, 0, 1.0) for b in (0, 2) + ((2.5,) if rng.random() < 0.4 else ())]
            notes["snare"] += [(t0 + b * beat, 0, 0, 1.0) for b in (1, 3)]
            notes["hat"] += [(t0 + e * beat / 2, 0, 0, 0.6 + 0.4 * (e % 2 == 0)) for e in range(8)]
    return notes


def render(plan: MusicPlan, n_samples: int, seed: int) -> np.ndarray:
    """`n_samples` of float32 audio for `plan`, normalised to -1 dBFS."""
    rng = np.random.default_rng(int(seed) % 2**64)
    notes = _compose(plan, n_samples / SR, rng)
    buffer = np.zeros(n_samples + 3 * SR)  # room for release tails
    cache: dict[tuple, np.ndarray] = {}  # repeated notes are rendered once
    for name, events in notes.items():
        for start, held, midi, velocity in events:
            begin = int(start * SR)
            if begin >= n_samples:
                continue
            key = (name, midi, int(held * SR))
            if key not in cache:
                cache[key] = drum_hit(name, rng) if name in DRUMS else TIMBRES[name](_hz(midi), held, rng)
            wave = cache[key][: buffer.size - begin]
            buffer[begin : begin + wave.size] += _GAIN[name] * velocity * wave
    out = buffer[:n_samples]
    fade_in, fade_out = min(int(0.01 * SR), n_samples // 4), min(int(0.1 * SR), n_samples // 4)
    out[:fade_in] *= np.linspace(0, 1, fade_in, endpoint=False)
    if fade_out:
        out[-fade_out:] *= np.linspace(1, 0, fade_out)
    peak = float(np.max(np.abs(out))) if n_samples else 0.0
    return (out * (PEAK / peak) if peak > 0 else out).astype(np.float32)


class ProceduralMusicGenerator(MusicGenerator):
    """Prompt-steered procedural music at 32 kHz; `seed` picks key, progression and melody."""

    model_id = "baseline:synth"
    device = "cpu"
    sample_rate = SAMPLE_RATE

    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        if not math.isfinite(seconds):
            raise WireError("seconds must be a finite number")
        n_samples = int(np.clip(round(seconds * SR), 1, round(MAX_SECONDS * SR)))  # (0, 60] s
        return Audio(render(plan_music(prompt, seed), n_samples, seed), SR)
