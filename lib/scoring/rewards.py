"""Reward building blocks: measured numbers -> 0..1 components, and the weighted mean.

Pure functions, so the docs, the tests and the benchmark all quote the same
thing. Each service (lib/services) picks its components and their weights. A
component whose evaluator is switched off (`--eval.clap none`) is left out and
the remaining weights are renormalised, rather than counted as 0 for everybody.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Optional

import numpy as np

MOS_RANGE = (1.0, 4.0)  # DNSMOS OVRL: white noise ~1.1, clean studio speech ~3.5-4
AESTHETICS_RANGE = (3.0, 8.0)  # Audiobox Aesthetics axes (1..10): noise and speech-as-music sit low, produced music 6-8
CLAP_COSINE_RANGE = (0.05, 0.45)  # unrelated text/audio pairs sit near 0, good matches 0.3-0.5
MIN_SPEECH_RATIO = 0.3  # TTS/VC: less speech than this (silero VAD) is gated
SPEECH_LIKE_RANGE = (0.3, 0.8)  # music: speech-likeness where the penalty starts / is total
WORDS_PER_SECOND_SPEECH = 1.5  # a transcript this dense counts as fully "wordy"
F0_SEMITONES_ZERO = 6.0  # median F0 this far off scores 0 pitch match
TEMPO_ERROR_RANGE = (0.06, 0.25)  # music: relative tempo error where tempo match starts to fall / is 0
CONTENT_WER_RANGE = (0.7, 1.0)  # speech: WER where the content factor starts to fall / is 0: an answer
# that does not say the text is worth nothing, however natural it sounds (honest Kokoro reaches WER 0.71
# under Whisper tiny.en on names and currencies, so the offline ASR's errors cost nothing)
REPETITION_RANGE = (0.8, 0.98)  # music: share of frames recurring exactly at one lag, where the penalty
# starts / is total (a looped snippet: 1.0; procedural pads up to 0.72; composed music lower)
CONTINUITY_RANGE = (0.35, 0.6)  # music: share of non-silent frames where the penalty is total / ends (a 30% snippet
# padded with silence: 0.3; the procedural synth at its sparsest: 0.65)
MUSIC_SILENCE_DBFS = -60.0  # music: a 20 ms frame this quiet is silence (quiet passages sit above it;
# the speech gates' -45 dBFS would call a sparse piano piece half silent)
TEMPO_MIN_RHYTHM = 0.5  # music: tempo is only judged on a clear pulse (a pad has none to measure;
# its weak pulse already costs it the rhythm part of quality)


def ramp(x: float, zero: float, one: float) -> float:
    if not math.isfinite(x):
        return 0.0
    return float(np.clip((x - zero) / (one - zero), 0.0, 1.0))


def naturalness(mos: float, mos_range: tuple[float, float] = MOS_RANGE) -> float:
    return ramp(mos, *mos_range)


def aesthetics(scores: dict[str, float]) -> float:
    """Audiobox Aesthetics -> 0..1: the mean of production quality, content enjoyment and content
    usefulness (complexity is not better when higher), each ramped over AESTHETICS_RANGE."""
    return float(np.mean([ramp(scores[axis], *AESTHETICS_RANGE) for axis in ("PQ", "CE", "CU")]))


def intelligibility(wer: float) -> float:
    return 1.0 - ramp(wer, 0.0, 1.0)


def content_factor(wer: float) -> float:
    """Multiplier for speech answers: 1 up to WER 0.7 (ASR errors on honest speech), 0 at 1."""
    return 1.0 - ramp(wer, *CONTENT_WER_RANGE)


def f0_match(reference: tuple[float, float], output: tuple[float, float]) -> float:
    """0.7 x median-pitch match (semitones) + 0.3 x pitch-range match (log-F0 spread ratio)."""
    (ref_hz, ref_spread), (out_hz, out_spread) = reference, output
    if min(ref_hz, out_hz) <= 0:
        return 0.0
    semitones = abs(12.0 * math.log2(out_hz / ref_hz))
    pitch = 1.0 - ramp(semitones, 0.0, F0_SEMITONES_ZERO)
    spread = 1.0 - ramp(abs(math.log2(max(out_spread, 1e-3) / max(ref_spread, 1e-3))), 0.0, 1.0)
    return 0.7 * pitch + 0.3 * spread


def tempo_match(measured_bpm: float, stated_bpm: float) -> float:
    """How well a clip keeps the tempo its prompt states. Half or double time counts as the same
    tempo (beat trackers and listeners disagree on the beat level); 6% off scores 1, 25% off 0."""
    if not (measured_bpm > 0 and stated_bpm > 0):
        return 0.0
    error = min(abs(math.log2(measured_bpm / stated_bpm) - octave) for octave in (-1, 0, 1))
    return 1.0 - ramp(2.0**error - 1.0, *TEMPO_ERROR_RANGE)


def duration_match(seconds: float, requested: float, slack: float) -> float:
    return 1.0 - ramp(abs(seconds - requested), 0.0, max(slack, 1e-6))


def speech_likeness(speech_ratio: float, transcript: Optional[str], seconds: float) -> float:
    """Music: VAD speech share, capped by how many words ASR heard per second (silero alone
    calls sustained synth pads speech; Whisper hears only "you" in them)."""
    if transcript is None:
        return speech_ratio
    words = [w for w in transcript.lower().split() if sum(ch.isalpha() for ch in w) >= 2]
    wordiness = ramp(len(words) / max(seconds, 1e-3), 0.0, WORDS_PER_SECOND_SPEECH)
    return min(speech_ratio, wordiness)


def weighted_mean(weights: Mapping[str, float], components: Mapping[str, float]) -> float:
    """Weighted mean of the components that are present (absent ones are not counted as 0)."""
    present = {k: w for k, w in weights.items() if k in components}
    total = sum(present.values())
    if total <= 0:
        return 0.0
    score = sum(w * components[k] for k, w in present.items()) / total
    return score if math.isfinite(score) else 0.0
