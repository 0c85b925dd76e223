"""Measures that services compose in `Service.evaluate`: each takes the round's
surviving clips, calls its evaluator once on all of them (batched), and writes
its components into each clip.

`timed(stage, audios)` times one evaluator call (stage `asr`, `mos`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio, frame_dbfs
from audionet.lib.core.f0 import f0_summary, voiced_f0
from audionet.lib.prompts.music import stated_bpm
from audionet.lib.scoring import rewards
from audionet.lib.scoring.duplicates import FRAME_S, fingerprint
from audionet.lib.scoring.judge import Clip
from audionet.lib.scoring.pitch import pitch_accuracy
from audionet.lib.scoring.text import word_error_rate

Timed = Callable[[str, Sequence[Audio]], AbstractContextManager]


def speech_quality(evaluators, clips: Sequence[Clip], texts: Sequence[str], timed: Timed) -> None:
    """MOS predictors -> mos_<name> each, "mos" (the first: the one tables show) and naturalness (the
    mean of their ramped scores, so fooling one predictor is not enough); ASR against `texts` -> WER
    -> intelligibility."""
    audios = [clip.audio for clip in clips]
    naturalness: list[list[float]] = [[] for _ in clips]
    for predictor in evaluators.mos:
        with timed(f"mos/{predictor.name}", audios):
            scores = predictor.predict(audios)
        for n, (clip, mos) in enumerate(zip(clips, scores)):
            clip.components[f"mos_{predictor.name}"] = mos
            clip.components.setdefault("mos", mos)
            naturalness[n].append(rewards.naturalness(mos, predictor.mos_range))
    if evaluators.mos:
        for clip, parts in zip(clips, naturalness):
            clip.components["naturalness"] = float(np.mean(parts))
    if evaluators.asr is not None:
        with timed("asr", audios):
            heard = evaluators.asr.transcribe(audios)
        for clip, text, transcript in zip(clips, texts, heard):
            wer = word_error_rate(text, transcript)
            clip.components.update(wer=wer, intelligibility=rewards.intelligibility(wer))


def voice_match(evaluators, clips: Sequence[Clip], references: Sequence[Audio], timed: Timed) -> None:
    """Speaker-embedding cosine to each clip's reference -> similarity; voiced-F0 distributions ->
    f0_match (rewarded) plus the Hz RMSE and semitone offset (reported, for people)."""
    outputs = [clip.audio for clip in clips]
    both = list(references) + outputs
    with timed("speaker", both):
        vectors = evaluators.speaker.embed(both)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    low, high = getattr(evaluators.speaker, "cosine_range", (0.2, 0.9))
    with timed("pitch", both):
        pitches = [(voiced_f0(ref), voiced_f0(out)) for ref, out in zip(references, outputs)]
    for n, clip in enumerate(clips):
        cosine = float(vectors[n] @ vectors[len(clips) + n])
        ref_f0, out_f0 = pitches[n]
        clip.components.update(
            speaker_cosine=cosine,
            similarity=rewards.ramp(cosine, low, high),
            f0_match=rewards.f0_match(f0_summary(ref_f0), f0_summary(out_f0)),
            **pitch_accuracy(ref_f0, out_f0),
        )


def music_signal(evaluators, clips: Sequence[Clip], prompts: Sequence[str], timed: Timed) -> None:
    """Signal statistics (quality, rhythm, bpm, ...); where the prompt states a bpm and the clip has
    a clear pulse, tempo_match (offline text adherence); the share of non-silent frames
    ("active") and of frames that repeat exactly at one lag ("repetition": a looped snippet)."""
    audios = [clip.audio for clip in clips]
    with timed("music_quality", audios):
        qualities = evaluators.music_quality.quality(audios)
    for clip, prompt, parts in zip(clips, prompts, qualities):
        asked = stated_bpm(prompt)
        if asked is not None and parts["rhythm"] >= rewards.TEMPO_MIN_RHYTHM:
            parts["tempo_match"] = rewards.tempo_match(parts.get("bpm", 0.0), asked)
        parts["active"] = float(np.mean(frame_dbfs(clip.audio) > rewards.MUSIC_SILENCE_DBFS))
        parts["repetition"] = repetition(clip.audio)
        clip.components.update(parts)


def repetition(audio: Audio, lags_s: tuple[float, float] = (0.5, 4.0), alike: float = 0.98) -> float:
    """The largest share of 20 ms frames whose spectrum recurs almost exactly one lag later, over
    lags of 0.5-4 s: a looped snippet scores 1, composed or generated music well under 0.6."""
    prints = fingerprint(audio)
    low, high = (int(s / FRAME_S) for s in lags_s)
    best = 0.0
    for lag in range(low, min(high, len(prints) // 2) + 1):
        a, b = prints[:-lag], prints[lag:]
        a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
        cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-9)
        best = max(best, float(np.mean(cosine > alike)))
    return best


def text_adherence(evaluators, clips: Sequence[Clip], prompts: Sequence[str], timed: Timed) -> None:
    """CLAP cosine between each prompt and its clip -> adherence (skipped when CLAP is off)."""
    if evaluators.clap is None:
        return
    audios = [clip.audio for clip in clips]
    with timed("clap", audios):
        cosines = evaluators.clap.score(list(prompts), audios)
    for clip, cosine in zip(clips, cosines):
        clip.components.update(clap_cosine=cosine, adherence=rewards.ramp(cosine, *rewards.CLAP_COSINE_RANGE))


def production_aesthetics(evaluators, clips: Sequence[Clip], timed: Timed) -> None:
    """Audiobox Aesthetics axes (aes_pq, aes_ce, aes_cu, aes_pc on 1..10) and their 0..1 summary
    "aesthetics" (skipped when no aesthetics model is loaded)."""
    if evaluators.aesthetics is None:
        return
    audios = [clip.audio for clip in clips]
    with timed("aesthetics", audios):
        ratings = evaluators.aesthetics.rate(audios)
    for clip, scores in zip(clips, ratings):
        clip.components.update({f"aes_{axis.lower()}": value for axis, value in scores.items()})
        clip.components["aesthetics"] = rewards.aesthetics(scores)


def speech_likeness(evaluators, clips: Sequence[Clip], timed: Timed) -> None:
    """How much a clip is speech (VAD share capped by the words ASR hears per second) and the
    penalty that follows. Only clips the VAD calls mostly speech are worth an ASR pass."""
    suspects = [c for c in clips if c.components["speech_ratio"] >= rewards.SPEECH_LIKE_RANGE[0]]
    heard: dict[int, Optional[str]] = {id(c): None for c in suspects}
    if suspects and evaluators.asr is not None:
        with timed("asr", [c.audio for c in suspects]):
            transcripts = evaluators.asr.transcribe([c.audio for c in suspects])
        heard.update(zip((id(c) for c in suspects), transcripts))
    for clip in clips:
        ratio = clip.components["speech_ratio"]
        likeness = rewards.speech_likeness(ratio, heard[id(clip)], clip.audio.seconds) if id(clip) in heard else ratio
        clip.components.update(
            speech_likeness=likeness, speech_penalty=rewards.ramp(likeness, *rewards.SPEECH_LIKE_RANGE)
        )
