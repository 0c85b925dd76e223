"""VC reference voices: clips with transcripts that the validator sends to miners.

Two sources behind one `draw(rng)`:
* `SynthesisedReferences` - one or more TTS backends speak a fresh sentence in
  a random voice each round (default: the 18 espeak voices and the 5 Kokoro
  voices; any TTS spec works), so a reference is never reused and answers
  cannot be cached. Several engines, because references from one engine favour
  cloners built on that engine (an espeak-based clone scores high on espeak
  references only);
* `FileReferences` - the operator's own clips (`--vc.references DIR`): every
  `name.wav|flac|ogg` needs a `name.txt` with its transcript. Files are
  checked once at start-up; a bad one is a one-line ConfigError.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import soundfile as sf

from lib.audio import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE, Audio, encode_flac
from lib.errors import ConfigError
from lib.prompts import make_seed, make_tts_prompt
from lib.protocol import MAX_REFERENCE_FLAC_BYTES, MAX_TEXT_CHARS, REFERENCE_SECONDS

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg")


@dataclass(frozen=True)
class Reference:
    name: str
    audio: Audio
    transcript: str


class SynthesisedReferences:
    def __init__(self, speakers: Sequence[tuple[object, Sequence[Optional[str]]]]):
        """`speakers`: (SpeechSynthesizer, its voice names) pairs; every (engine, voice) is equally likely."""
        self.choices = [(synth, voice) for synth, voices in speakers for voice in (list(voices) or [None])]
        if not self.choices:
            raise ConfigError("no reference voices: give at least one TTS backend")

    def draw(self, rng: np.random.Generator) -> Reference:
        # At most 25 words: a reference clip must stay within the protocol's 20 s.
        transcript = make_tts_prompt(rng, max_words=25).text
        synthesizer, voice = self.choices[int(rng.integers(len(self.choices)))]
        audio = synthesizer.synthesize(transcript, voice=voice, seed=make_seed(rng))
        return Reference(voice or "default", audio, transcript)


def load_reference_clip(path: str) -> Reference:
    """One checked reference clip and its transcript; ConfigError (one line) if unusable."""
    stem, _ = os.path.splitext(path)
    name = os.path.basename(stem)
    text_path = stem + ".txt"
    if not os.path.isfile(text_path):
        raise ConfigError(f"reference {path}: missing transcript {text_path}")
    try:
        with open(text_path, encoding="utf-8") as handle:
            transcript = " ".join(handle.read().split())
        samples, rate = sf.read(path, dtype="float32", always_2d=True)
    except (OSError, UnicodeDecodeError, sf.LibsndfileError, RuntimeError) as error:
        raise ConfigError(f"reference {path}: cannot read: {str(error).splitlines()[0]}") from None
    if not transcript or len(transcript) > MAX_TEXT_CHARS or any(ord(ch) < 32 for ch in transcript):
        raise ConfigError(f"reference {text_path}: transcript must be 1-{MAX_TEXT_CHARS} printable characters")
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise ConfigError(f"reference {path}: sample rate {rate} Hz is outside {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz")
    audio = Audio(samples.mean(axis=1), rate)
    low, high = REFERENCE_SECONDS
    if not low <= audio.seconds <= high:
        raise ConfigError(f"reference {path}: {audio.seconds:.1f} s long; references must be {low:g}-{high:g} s")
    if not np.isfinite(audio.samples).all() or float(np.abs(audio.samples).max()) < 1e-3:
        raise ConfigError(f"reference {path}: silent or not finite")
    if len(encode_flac(audio)) > MAX_REFERENCE_FLAC_BYTES:
        raise ConfigError(f"reference {path}: larger than {MAX_REFERENCE_FLAC_BYTES} bytes as FLAC; use a shorter clip")
    return Reference(name, audio, transcript)


class FileReferences:
    def __init__(self, directory: str):
        if not os.path.isdir(directory):
            raise ConfigError(f"--vc.references {directory}: not a directory")
        paths = sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.lower().endswith(AUDIO_SUFFIXES))
        if not paths:
            raise ConfigError(f"--vc.references {directory}: no {'/'.join(AUDIO_SUFFIXES)} clips found")
        self.references = [load_reference_clip(p) for p in paths]

    def draw(self, rng: np.random.Generator) -> Reference:
        return self.references[int(rng.integers(len(self.references)))]


DEFAULT_REFERENCE_TTS = "baseline:espeak,kokoro:"


def add_reference_flags(parser) -> None:
    """--vc.references / --vc.reference_tts, shared by the validator and audionet-bench so a
    benchmark's voice-clone references are drawn the way the validator draws them."""
    from lib.config import flag

    group = parser.add_argument_group("voice-clone references")
    flag(group, "vc.references", default=None,
         help="directory of your own reference clips (name.wav|flac|ogg + name.txt transcript); "
              "default: fresh sentences spoken by --vc.reference_tts in random voices")
    flag(group, "vc.reference_tts", default=DEFAULT_REFERENCE_TTS,
         help="comma-separated TTS specs (any --tts.model spec) whose voices speak the fresh reference sentences")


def references_from_args(args):
    """FileReferences for --vc.references, else SynthesisedReferences from --vc.reference_tts (on CPU)."""
    if args.vc_references:
        return FileReferences(args.vc_references)
    from models.registry import load_backend

    speakers = []
    for spec in (s.strip() for s in args.vc_reference_tts.split(",") if s.strip()):
        speaker = load_backend("tts", spec, device="cpu")
        speakers.append((speaker, list(speaker.voices) or [None]))
    return SynthesisedReferences(speakers)
