"""The analyses a service's declaration names: each calls its evaluator once on all of a round's surviving
clips (batched) and writes raw measures into each clip. They compute measures, never rewards: how a
measure counts is the declaration's business (lib/scoring/declaration.py).

`timed(stage, audios)` times one evaluator call (stage `asr`, `mos/<name>`, ...). An analysis whose
evaluator is off (`--eval.clap none`) writes nothing, so the parts that read it are left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio, frame_dbfs
from audionet.lib.core.f0 import f0_summary, voiced_f0
from audionet.lib.core.threads import on_every_core
from audionet.lib.prompts.music import stated_bpm
from audionet.lib.scoring import music_content, music_words
from audionet.lib.scoring.duplicates import FRAME_S, fingerprint
from audionet.lib.scoring.jobs import Clip
from audionet.lib.scoring.pitch import pitch_accuracy
from audionet.lib.scoring.text import word_error_rate
from audionet.models.eval.music_floor import floored_audio, onsets_per_s, pitch_class_shares

StageTimer = Callable[[str, Sequence[Audio]], AbstractContextManager]

MUSIC_SILENCE_DBFS = -60.0  # music: a 20 ms frame this quiet is silence (quiet passages sit above it;
# the speech gates' -45 dBFS would call a sparse piano piece half silent)
TEMPO_MIN_RHYTHM = 0.5  # music: tempo is only measured on a clear pulse (a pad has none to measure;
# its weak pulse already costs it the rhythm part of quality)
SPEECH_SUSPECT_RATIO = 0.3  # music: clips the VAD calls at least this much speech get an ASR pass
WORDS_PER_SECOND_SPEECH = 1.5  # music: a transcript this dense counts as fully "wordy"
MUSIC_SOUND, SPEECH_SOUND = "music", "speech"  # YAMNet's broad kinds of sound (models/eval/yamnet.py)
MIN_SPREAD = 1e-3  # log-F0 spreads below this count as this (a monotone voice)


def batched(
    clips: Sequence[Clip], timed: StageTimer, stage: str, call: Callable[[list[Audio]], list], heard: bool = False
) -> list:
    """One evaluator call on every clip's audio (`heard`: what the music judges hear, where it is floored),
    timed as `stage`: its results, in the clips' order."""
    audios = [(clip.heard or clip.audio) if heard else clip.audio for clip in clips]
    with timed(stage, audios):
        return list(call(audios))


def mos(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Each MOS predictor -> mos_<name>; "mos" is the first (the one tables show)."""
    for predictor in evaluators.mos:
        for clip, value in zip(clips, batched(clips, timed, f"mos/{predictor.name}", predictor.predict)):
            clip.measures[f"mos_{predictor.name}"] = float(value)
            clip.measures.setdefault("mos", float(value))


def asr(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """ASR against the words each clip must say -> wer (capped at 1), as the ASR hears each clip through the
    Judge's listening noise under the clip's seed (lib/scoring/listening.py): the mean over its draws."""
    if evaluators.asr is None:
        return
    heard = [clip.listening.heard(clip.audio, clip.seed) for clip in clips]
    with timed("asr", [clip.audio for clip in clips]):
        transcripts = iter(evaluators.asr.transcribe([audio for copies in heard for audio in copies]))
    for clip, copies in zip(clips, heard):
        errors = [word_error_rate(clip.expect.words or "", next(transcripts)) for _ in copies]
        clip.measures["wer"] = float(np.mean(errors))


def speaker(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Speaker-embedding cosine between each clip and its reference -> speaker_cosine."""
    references = [clip.expect.reference for clip in clips]
    both = references + [clip.audio for clip in clips]
    with timed("speaker", both):
        vectors = evaluators.speaker.embed(both)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    for n, clip in enumerate(clips):
        clip.measures["speaker_cosine"] = float(vectors[n] @ vectors[len(clips) + n])


def pitch(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Voiced-F0 distributions of each clip and its reference: pitch_offset_st (|median offset| in semitones)
    and pitch_spread_log2 (|log2 of the log-F0 spread ratio|), infinite where either side has no voiced
    speech to compare; f0_rmse_hz and the signed f0_offset_st for people (lib/scoring/pitch.py)."""
    both = [clip.expect.reference for clip in clips] + [clip.audio for clip in clips]
    with timed("pitch", both):
        f0s = on_every_core(voiced_f0, both)  # WORLD releases the GIL: 2 threads take 0.51x one's time here
    for clip, ref_f0, out_f0 in zip(clips, f0s[: len(clips)], f0s[len(clips) :]):
        (ref_hz, ref_spread), (out_hz, out_spread) = f0_summary(ref_f0), f0_summary(out_f0)
        voiced = min(ref_hz, out_hz) > 0
        clip.measures["pitch_offset_st"] = abs(12.0 * math.log2(out_hz / ref_hz)) if voiced else math.inf
        spread = abs(math.log2(max(out_spread, MIN_SPREAD) / max(ref_spread, MIN_SPREAD)))
        clip.measures["pitch_spread_log2"] = spread if voiced else math.inf
        clip.measures.update(pitch_accuracy(ref_f0, out_f0))


def music_signal(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Signal statistics (quality, rhythm, bpm, ...); where the description states a bpm and the clip has
    a clear pulse, tempo_error (relative, half and double time counting as the same tempo); the share of
    non-silent frames ("active") and of frames that repeat exactly at one lag ("repetition")."""
    for clip, parts in zip(clips, batched(clips, timed, "music_quality", evaluators.music_quality.quality)):
        asked = stated_bpm(clip.expect.description or "")
        if asked is not None and parts["rhythm"] >= TEMPO_MIN_RHYTHM:
            parts["tempo_error"] = tempo_error(parts.get("bpm", 0.0), asked)
        parts["active"] = float(np.mean(frame_dbfs(clip.audio) > MUSIC_SILENCE_DBFS))
        parts["repetition"] = repetition(clip.audio)
        clip.measures.update(parts)


def tempo_error(measured_bpm: float, stated_bpm: float) -> float:
    """Relative tempo error, half or double time counting as the same tempo (beat trackers and listeners
    disagree on the beat level); infinite without a measured tempo."""
    if not (measured_bpm > 0 and stated_bpm > 0):
        return math.inf
    octaves = min(abs(math.log2(measured_bpm / stated_bpm) - octave) for octave in (-1, 0, 1))
    return 2.0**octaves - 1.0


def repetition(audio: Audio, lags_s: tuple[float, float] = (0.5, 4.0), alike: float = 0.98) -> float:
    """The largest share of sounding 20 ms frames whose spectrum recurs almost exactly one lag later, over lags
    of 0.5-4 s: a looped snippet scores 1, composed or generated music well under 0.75. A pair of silent frames
    is left out: silence has no spectrum to recur, and counting it let a loop whose second holds a pause score
    its share of sound (0.54-0.98 for one loop of the synth in nine)."""
    prints = fingerprint(audio)
    sounding = frame_dbfs(audio) > MUSIC_SILENCE_DBFS
    frames = min(len(prints), len(sounding))
    prints, sounding = prints[:frames], sounding[:frames]
    low, high = (int(s / FRAME_S) for s in lags_s)
    best = 0.0
    for lag in range(low, min(high, frames // 2) + 1):
        a, b = prints[:-lag], prints[lag:]
        a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
        cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-9)
        either = sounding[:-lag] | sounding[lag:]
        if either.any():
            best = max(best, float(np.mean(cosine[either] > alike)))
    return best


def duration(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """duration_error: how far a clip's length is from the length asked for, in units of the length gate's
    half-width (0: exact; 1: at the edge of what the gate lets through)."""
    for clip in clips:
        if clip.expect.target_seconds is None:
            continue
        low, high = clip.expect.seconds
        slack = max((high - low) / 2, 1e-6)
        clip.measures["duration_error"] = abs(clip.audio.seconds - clip.expect.target_seconds) / slack


def clap(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """CLAP cosine between each description and its clip -> clap_cosine (nothing when CLAP is off)."""
    if evaluators.clap is None:
        return
    texts = [clip.expect.description or "" for clip in clips]
    for clip, cosine in zip(clips, batched(clips, timed, "clap", lambda audios: evaluators.clap.score(texts, audios))):
        clip.measures["clap_cosine"] = float(cosine)


def aesthetics(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Audiobox Aesthetics axes -> aes_pq, aes_ce, aes_cu, aes_pc on 1..10 (nothing when it is off)."""
    if evaluators.aesthetics is None:
        return
    for clip, scores in zip(clips, batched(clips, timed, "aesthetics", evaluators.aesthetics.rate)):
        clip.measures.update({f"aes_{axis.lower()}": float(value) for axis, value in scores.items()})


def music_floor(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """The answer under a noise floor for the judges a faint perturbation could buy (sounds, notes, tags:
    models/eval/music_floor.py); declared before them. Without it they hear the answer itself."""
    with timed("music_floor", [clip.audio for clip in clips]):
        for clip in clips:
            clip.heard = floored_audio(clip.audio)


def content(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """The music's onsets and key from the signal itself (the answer as the music floor hears it, where declared;
    models/eval/music_floor.py): onsets_per_s, a chord one onset; key_clarity, the best key profile's correlation
    with the shares of amplitude in each pitch class; key_fit, where the description names a key (-1..1)."""
    with timed("content", [clip.audio for clip in clips]):
        for clip in clips:
            heard = clip.audio if clip.heard is None else clip.heard
            classes = pitch_class_shares(heard)
            clip.measures.update(onsets_per_s=onsets_per_s(heard), key_clarity=music_content.estimate_key(classes)[1])
            stated = music_content.parse_key(clip.expect.description or "")
            if stated is not None:
                clip.measures["key_fit"] = music_content.key_fit(classes, stated)


def sounds(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """AudioSet's broad kinds of sound (YAMNet) -> music_probability, speech_probability (nothing when off)."""
    if evaluators.sounds is None:
        return
    for clip, kinds in zip(clips, batched(clips, timed, "sounds", evaluators.sounds.kinds, heard=True)):
        clip.measures.update(music_probability=kinds[MUSIC_SOUND], speech_probability=kinds[SPEECH_SOUND])


def notes(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Transcribed notes (basic-pitch) -> notes_per_s, key_clarity, key_stability, triad_share, ...
    (lib/scoring/music_content.py); where the description names a key, key_fit: how well the notes' pitch
    classes fit it (-1..1)."""
    if evaluators.notes is None:
        return
    for clip, found in zip(clips, batched(clips, timed, "notes", evaluators.notes.notes, heard=True)):
        clip.measures.update(music_content.summary(found, clip.audio.seconds))
        stated = music_content.parse_key(clip.expect.description or "")
        if stated is not None:
            clip.measures["key_fit"] = music_content.key_fit(music_content.pitch_class_histogram(found), stated)


def tags(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """Music tags (musicnn) against the words of the description (genres, instruments, moods, acoustic or
    electronic: lib/scoring/music_words.py) -> tag_adherence, where the description names any."""
    if evaluators.tags is None:
        return
    for clip, scores in zip(clips, batched(clips, timed, "tags", evaluators.tags.scores, heard=True)):
        value = music_words.adherence(clip.expect.description or "", scores)
        if value is not None:
            clip.measures["tag_adherence"] = value


def speech_likeness(evaluators, clips: Sequence[Clip], timed: StageTimer) -> None:
    """How much a clip is speech: the VAD's share, capped by how many words ASR hears per second (silero
    alone calls sustained synth pads speech; Whisper hears only "you" in them). Only clips the VAD calls
    mostly speech are worth an ASR pass."""
    suspects = [c for c in clips if c.measures["speech_ratio"] >= SPEECH_SUSPECT_RATIO]
    heard: dict[int, Optional[str]] = {id(c): None for c in suspects}
    if suspects and evaluators.asr is not None:
        with timed("asr", [c.audio for c in suspects]):
            transcripts = evaluators.asr.transcribe([c.audio for c in suspects])
        heard.update(zip((id(c) for c in suspects), transcripts))
    for clip in clips:
        ratio, transcript = clip.measures["speech_ratio"], heard.get(id(clip))
        clip.measures["speech_likeness"] = ratio if transcript is None else min(ratio, wordiness(transcript, clip))


def wordiness(transcript: str, clip: Clip) -> float:
    words = [w for w in transcript.lower().split() if sum(ch.isalpha() for ch in w) >= 2]
    return min(1.0, len(words) / max(clip.audio.seconds, 1e-3) / WORDS_PER_SECOND_SPEECH)


ANALYSES: dict[str, Callable[..., None]] = {
    "mos": mos,
    "asr": asr,
    "speaker": speaker,
    "pitch": pitch,
    "music_signal": music_signal,
    "duration": duration,
    "clap": clap,
    "aesthetics": aesthetics,
    "speech_likeness": speech_likeness,
    "music_floor": music_floor,
    "content": content,
    "sounds": sounds,
    "notes": notes,
    "tags": tags,
}
