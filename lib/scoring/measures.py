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

from audionet.lib.audio import Audio
from audionet.lib.f0 import f0_summary, voiced_f0
from audionet.lib.prompts.music import stated_bpm
from audionet.lib.scoring import rewards
from audionet.lib.scoring.judge import Clip
from audionet.lib.scoring.pitch import pitch_accuracy
from audionet.lib.scoring.text import word_error_rate

Timed = Callable[[str, Sequence[Audio]], AbstractContextManager]


def speech_quality(evaluators, clips: Sequence[Clip], texts: Sequence[str], timed: Timed) -> None:
    """MOS -> naturalness; ASR against `texts` -> WER -> intelligibility."""
    audios = [clip.audio for clip in clips]
    if evaluators.mos is not None:
        with timed("mos", audios):
            scores = evaluators.mos.predict(audios)
        for clip, mos in zip(clips, scores):
            clip.components.update(mos=mos, naturalness=rewards.naturalness(mos))
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
    """Signal statistics (quality, rhythm, bpm, ...) and, where the prompt states a bpm and the
    clip has a clear pulse, tempo_match: offline text adherence."""
    audios = [clip.audio for clip in clips]
    with timed("music_quality", audios):
        qualities = evaluators.music_quality.quality(audios)
    for clip, prompt, parts in zip(clips, prompts, qualities):
        asked = stated_bpm(prompt)
        if asked is not None and parts["rhythm"] >= rewards.TEMPO_MIN_RHYTHM:
            parts["tempo_match"] = rewards.tempo_match(parts.get("bpm", 0.0), asked)
        clip.components.update(parts)


def text_adherence(evaluators, clips: Sequence[Clip], prompts: Sequence[str], timed: Timed) -> None:
    """CLAP cosine between each prompt and its clip -> adherence (skipped when CLAP is off)."""
    if evaluators.clap is None:
        return
    audios = [clip.audio for clip in clips]
    with timed("clap", audios):
        cosines = evaluators.clap.score(list(prompts), audios)
    for clip, cosine in zip(clips, cosines):
        clip.components.update(clap_cosine=cosine, adherence=rewards.ramp(cosine, *rewards.CLAP_COSINE_RANGE))


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
