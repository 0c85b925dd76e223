"""Real music with labels, for calibrating and testing the music judge (the judges study and the tests):

* `labelled_tracks()`: the 28 neural tracks of `immich-memories-music` 0.1.0 (MIT; made with the
  ACE-Step 1.5 music model; a dev requirement), each with the labels its LICENSE-MUSIC gives it: mood,
  acoustic or electronic, bpm and key. `excerpt(track, start_s, seconds)` cuts one to a mono clip.
* `prompts(track)`: a prompt built from its own labels, and one from contradicting labels.
* `progression()`: a C - Am - F - G progression on the procedural synth's piano, whose notes are
  known exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from audionet.lib.core.audio import Audio

LINE = re.compile(r"^\s+(\S+\.opus)\s+(\d+) bpm\s+([A-G][b#]?) (major|minor)\s+seed \d+\s+\[(acoustic|electronic)\]")
PROGRESSION = ((60, 64, 67), (57, 60, 64), (53, 57, 60), (55, 59, 62))  # C, Am, F, G as MIDI notes
OTHER_MOOD = {
    "calm": "energetic",
    "energetic": "calm",
    "happy": "nostalgic",
    "nostalgic": "happy",
    "tender": "energetic",
}
OTHER_TIMBRE = {"acoustic": "electronic", "electronic": "acoustic"}
TEMPO_FACTOR = 1.45  # the contradicting prompt's tempo: this much faster (slow tracks) or slower (fast ones)


@dataclass(frozen=True)
class Track:
    path: Path
    mood: str  # calm, energetic, happy, nostalgic or tender
    timbre: str  # acoustic or electronic
    bpm: int
    key: str  # "C major", "Bb minor", ...

    @property
    def name(self) -> str:
        return self.path.stem


@cache
def labelled_tracks() -> tuple[Track, ...]:
    from immich_memories_music import tracks_dir

    labels = metadata.distribution("immich-memories-music").read_text("licenses/LICENSE-MUSIC") or ""
    found, mood = [], ""
    for line in labels.splitlines():
        if line.endswith("/") and not line.startswith(" "):
            mood = line.rstrip("/")
        elif match := LINE.match(line):
            file, bpm, tonic, mode, timbre = match.groups()
            found.append(Track(tracks_dir() / mood / file, mood, timbre, int(bpm), f"{tonic} {mode}"))
    return tuple(found)


@lru_cache(maxsize=64)
def excerpt(track: Track, start_s: float = 8.0, seconds: float = 8.0) -> Audio:
    import soundfile as sf

    with sf.SoundFile(str(track.path)) as stream:
        stream.seek(int(start_s * stream.samplerate))
        frames = stream.read(int(seconds * stream.samplerate), dtype="float32", always_2d=True)
        return Audio(frames.mean(axis=1), stream.samplerate)


def prompts(track: Track) -> tuple[str, str]:
    """(a prompt from the track's own labels, one from contradicting labels: the other mood and timbre, a
    tempo 1.45x off, and the key six fifths away in the other mode)."""
    from audionet.lib.scoring.music_content import Key, fifths_apart, parse_key

    key = parse_key(track.key)
    far = Key((key.relative_major + 6 + (0 if key.mode == "minor" else 9)) % 12, OTHER_MODE[key.mode])
    assert fifths_apart(key, far) == 6, (track.key, far)
    bpm = round(track.bpm * TEMPO_FACTOR) if track.bpm < 100 else round(track.bpm / TEMPO_FACTOR)
    own = f"{track.mood} {track.timbre} music, {track.bpm} bpm, in {track.key}"
    other = f"{OTHER_MOOD[track.mood]} {OTHER_TIMBRE[track.timbre]} music, {bpm} bpm, in {far.name}"
    return own, other


OTHER_MODE = {"major": "minor", "minor": "major"}


def progression(chord_s: float = 1.0, repeats: int = 2) -> Audio:
    """The progression as block chords on the procedural synth's piano (its release rings into the next)."""
    from audionet.models.baselines.timbres import SAMPLE_RATE, TIMBRES

    rng, step = np.random.default_rng(0), int(chord_s * SAMPLE_RATE)
    out = np.zeros(step * len(PROGRESSION) * repeats + SAMPLE_RATE)
    for i, chord in enumerate(PROGRESSION * repeats):
        for midi in chord:
            tone = TIMBRES["piano"](440.0 * 2 ** ((midi - 69) / 12), chord_s, rng)
            out[i * step : i * step + len(tone)] += tone
    return Audio(0.25 * out[: step * len(PROGRESSION) * repeats], SAMPLE_RATE)
