"""Reference voices: clips with transcripts that a validator sends with voice-clone requests.

Two sources behind one `draw(rng)`:
* `SynthesisedReferences` - one or more TTS backends speak a fresh sentence in
  a random voice each round, so a reference is never reused and answers cannot
  be cached. Several engines, because references from one engine favour
  cloners built on that engine (an espeak-based clone scores high on espeak
  references only);
* `FileReferences` - the operator's own clips (`--vc.references DIR`): every
  `name.wav|flac|ogg` needs a `name.txt` with its transcript. Files are loaded
  with the one clip loader (lib.core.audio_files) and checked once at start-up; a
  bad one is a one-line ConfigError.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.audio_files import load_reference_clip
from audionet.lib.core.errors import ConfigError, WireError
from audionet.lib.core.protocol import MAX_TEXT_CHARS
from audionet.lib.prompts import make_seed, make_tts_prompt

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")


@dataclass(frozen=True)
class Reference:
    name: str
    audio: Audio
    transcript: str


class SynthesisedReferences:
    def __init__(self, speakers: Sequence[tuple[object, Sequence[Optional[str]]]]):
        """`speakers`: (SpeechSynthesizer, its voice names) pairs. A draw picks the engine first,
        then one of its voices, so an engine with many voices (espeak has 18) does not dominate."""
        self.engines = [(synth, list(voices) or [None]) for synth, voices in speakers]
        if not self.engines:
            raise ConfigError("no reference voices: give at least one TTS backend")

    def draw(self, rng: np.random.Generator) -> Reference:
        # At most 25 words: a reference clip must stay within the protocol's 20 s.
        transcript = make_tts_prompt(rng, max_words=25).text
        synthesizer, voices = self.engines[int(rng.integers(len(self.engines)))]
        voice = voices[int(rng.integers(len(voices)))]
        audio = synthesizer.synthesize(transcript, voice=voice, seed=make_seed(rng))
        return Reference(voice or "default", audio, transcript)


def load_reference(path: str) -> Reference:
    """One checked reference clip and its transcript (`<stem>.txt`); ConfigError (one line) if unusable."""
    stem, _ = os.path.splitext(path)
    text_path = stem + ".txt"
    if not os.path.isfile(text_path):
        raise ConfigError(f"reference {path}: missing transcript {text_path}")
    try:
        with open(text_path, encoding="utf-8") as handle:
            transcript = " ".join(handle.read().split())
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"reference {text_path}: cannot read: {str(error).splitlines()[0]}") from None
    if not transcript or len(transcript) > MAX_TEXT_CHARS or any(ord(ch) < 32 for ch in transcript):
        raise ConfigError(f"reference {text_path}: transcript must be 1-{MAX_TEXT_CHARS} printable characters")
    try:
        audio = load_reference_clip(path)
    except WireError as error:
        raise ConfigError(f"reference {path}: {error}") from None
    return Reference(os.path.basename(stem), audio, transcript)


class FileReferences:
    """Every clip is checked at start-up, then only its path is kept: a folder of hundreds of
    recordings costs no memory, and a draw reads one clip (a few milliseconds)."""

    def __init__(self, directory: str):
        if not os.path.isdir(directory):
            raise ConfigError(f"--vc.references {directory}: not a directory")
        paths = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.lower().endswith(AUDIO_SUFFIXES))
        if not paths:
            raise ConfigError(f"--vc.references {directory}: no {'/'.join(AUDIO_SUFFIXES)} clips found")
        self.names = [load_reference(p).name for p in paths]  # raises on the first bad clip
        self.paths = paths

    def __len__(self) -> int:
        return len(self.paths)

    def draw(self, rng: np.random.Generator) -> Reference:
        return load_reference(self.paths[int(rng.integers(len(self.paths)))])
