"""The one scoring code path: a round's responses for one service -> verdicts.

Used by the validator (lib/validator_loop.py), the benchmarks and
`audionet-score`, so each scores exactly what the validator computes.
Order per round: cheap gates -> VAD gate -> duplicates/replay -> model
evaluators, each called once on all surviving clips (batched).
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Optional, Sequence

import numpy as np

from lib.audio import Audio
from lib.prompts.music import stated_bpm
from lib.scoring import rewards
from lib.scoring.duplicates import DuplicateFinder, fingerprint, is_copy
from lib.scoring.gates import clipped, expected_seconds, silent, wrong_length
from lib.scoring.pitch import f0_summary, pitch_accuracy
from lib.scoring.text import word_error_rate

GATES = {
    "tts": ("missing", "length", "silent", "clipped", "no_speech", "duplicate"),
    "vc": ("missing", "length", "silent", "clipped", "no_speech", "duplicate", "replay"),
    "music": ("missing", "length", "silent", "clipped", "duplicate"),
}
Measure = Callable[..., ContextManager]


@dataclass
class Job:
    request: object            # TTSRequest | VCRequest | MusicRequest (lib.protocol)
    audio: Optional[Audio]     # None = missing/undecodable
    label: str = ""            # miner uid/hotkey or file name, for duplicate reports


@dataclass
class Verdict:
    score: float                                          # raw 0..1, finite
    components: dict[str, float] = field(default_factory=dict)
    gates: dict[str, Optional[str]] = field(default_factory=dict)

    @property
    def gate(self) -> Optional[str]:
        """The first gate that fired, or None."""
        return next((reason for reason in self.gates.values() if reason), None)


def normalise_round(scores: Sequence[float]) -> list[float]:
    """Within-round rewards: 0.5 x raw + 0.5 x rank among the non-zero scores (best = 1).
    Gated (0) and non-finite scores get 0. The rank spreads close scores between good miners
    so the EMA can tell them apart; the raw half keeps absolute quality (a lone bad miner
    does not get 1)."""
    raw = [min(1.0, max(0.0, float(s))) if math.isfinite(float(s)) else 0.0 for s in scores]
    alive = sorted(v for v in raw if v > 0)
    out = []
    for value in raw:
        if value <= 0:
            out.append(0.0)
            continue
        below = sum(1 for v in alive if v < value)
        ties = sum(1 for v in alive if v == value)
        rank = (below + (ties + 1) / 2) / len(alive)  # average rank of ties, best -> 1
        out.append(0.5 * value + 0.5 * rank)
    return out


class Judge:
    def __init__(self, evaluators, duplicates: Optional[DuplicateFinder] = None):
        self.evaluators = evaluators
        self.duplicates = duplicates or DuplicateFinder()

    @classmethod
    def load(cls, specs: dict[str, str] | None = None, *, device: str = "auto") -> "Judge":
        from models.eval.registry import load_evaluators

        return cls(load_evaluators(specs, device=device))

    def score(self, service: str, jobs: Sequence[Job], *, measure: Optional[Measure] = None,
              remember: bool = True) -> list[Verdict]:
        """Raw verdicts for one round of `service`; `remember=False` keeps them out of the
        cross-round duplicate history (for one-off checks)."""
        if service not in GATES:
            raise ValueError(f"unknown service {service!r}")

        def timed(stage: str, clips: Sequence[Audio]) -> ContextManager:
            if measure is None or not clips:
                return nullcontext()
            return measure(service, stage, audio_seconds=float(sum(c.seconds for c in clips)))

        verdicts = [Verdict(0.0, {}, {name: None for name in GATES[service]}) for _ in jobs]
        for job, verdict in zip(jobs, verdicts):
            if job.audio is None:
                verdict.gates["missing"] = "no decodable audio"
                continue
            verdict.gates["length"] = wrong_length(service, job.request, job.audio)
            verdict.gates["silent"] = silent(job.audio)
            verdict.gates["clipped"] = clipped(job.audio)
        live = [i for i, v in enumerate(verdicts) if v.gate is None]
        clips = [jobs[i].audio for i in live]

        ev = self.evaluators
        with timed("vad", clips):
            ratios = ev.vad.speech_ratio(clips) if clips else []
        for i, ratio in zip(live, ratios):
            verdicts[i].components["speech_ratio"] = float(ratio)
            if service != "music" and ratio < rewards.MIN_SPEECH_RATIO:
                verdicts[i].gates["no_speech"] = f"no speech: VAD finds speech in {ratio:.0%} of the clip"

        self._gate_copies(service, jobs, verdicts, live, timed, remember)
        live = [i for i in live if verdicts[i].gate is None]
        if live:
            getattr(self, f"_evaluate_{service}")(jobs, verdicts, live, timed)
        for i in live:
            verdicts[i].score = rewards.combine(service, verdicts[i].components)
        for verdict in verdicts:
            verdict.components = {k: float(v) for k, v in verdict.components.items() if math.isfinite(float(v))}
            verdict.score = 0.0 if verdict.gate else min(1.0, max(0.0, verdict.score))
        return verdicts

    # --- anti-copying ---------------------------------------------------------------
    def _gate_copies(self, service, jobs, verdicts, live, timed, remember: bool) -> None:
        clips = [jobs[i].audio for i in live]
        with timed("duplicates", clips):
            prints = {i: fingerprint(jobs[i].audio) for i in live}
            labels = [job.label or f"#{n}" for n, job in enumerate(jobs)]
            reasons = self.duplicates.check_round(
                service, labels, [prints.get(i) for i in range(len(jobs))], remember=remember)
            for i in live:
                if reasons[i]:
                    verdicts[i].gates["duplicate"] = reasons[i]
                if service == "vc" and is_copy(prints[i], fingerprint(jobs[i].request.reference())):
                    verdicts[i].gates["replay"] = "replays the reference clip"

    # --- services ----------------------------------------------------------------------
    def _speech_quality(self, jobs, verdicts, live, timed, texts: Sequence[str]) -> None:
        """MOS and intelligibility, shared by TTS and VC."""
        ev, clips = self.evaluators, [jobs[i].audio for i in live]
        if ev.mos is not None:
            with timed("mos", clips):
                scores = ev.mos.predict(clips)
            for i, mos in zip(live, scores):
                verdicts[i].components.update(mos=mos, naturalness=rewards.naturalness(mos))
        if ev.asr is not None:
            with timed("asr", clips):
                heard = ev.asr.transcribe(clips)
            for i, text, transcript in zip(live, texts, heard):
                wer = word_error_rate(text, transcript)
                verdicts[i].components.update(wer=wer, intelligibility=rewards.intelligibility(wer))

    def _evaluate_tts(self, jobs, verdicts, live, timed) -> None:
        self._speech_quality(jobs, verdicts, live, timed, [jobs[i].request.text for i in live])

    def _evaluate_vc(self, jobs, verdicts, live, timed) -> None:
        from models.baselines.world_vc import voiced_f0

        references = [jobs[i].request.reference() for i in live]
        outputs = [jobs[i].audio for i in live]
        with timed("speaker", references + outputs):
            vectors = self.evaluators.speaker.embed(references + outputs)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        low, high = getattr(self.evaluators.speaker, "cosine_range", (0.2, 0.9))
        with timed("pitch", references + outputs):
            pitches = [(voiced_f0(ref), voiced_f0(out)) for ref, out in zip(references, outputs)]
        for n, i in enumerate(live):
            cosine = float(vectors[n] @ vectors[len(live) + n])
            ref_f0, out_f0 = pitches[n]
            # f0_match is rewarded; the Hz RMSE and semitone offset are reported for people (benchmark, score CLI).
            verdicts[i].components.update(speaker_cosine=cosine, similarity=rewards.ramp(cosine, low, high),
                                          f0_match=rewards.f0_match(f0_summary(ref_f0), f0_summary(out_f0)),
                                          **pitch_accuracy(ref_f0, out_f0))
        self._speech_quality(jobs, verdicts, live, timed, [jobs[i].request.text for i in live])

    def _evaluate_music(self, jobs, verdicts, live, timed) -> None:
        ev, clips = self.evaluators, [jobs[i].audio for i in live]
        with timed("music_quality", clips):
            qualities = ev.music_quality.quality(clips)
        for i, parts in zip(live, qualities):
            request, audio = jobs[i].request, jobs[i].audio
            low, high = expected_seconds("music", request)
            parts["duration_match"] = rewards.duration_match(audio.seconds, request.seconds, (high - low) / 2)
            asked = stated_bpm(request.prompt)  # offline text adherence: does it keep the asked tempo?
            if asked is not None and parts["rhythm"] >= rewards.TEMPO_MIN_RHYTHM:
                parts["tempo_match"] = rewards.tempo_match(parts.get("bpm", 0.0), asked)
            verdicts[i].components.update(parts)
        if ev.clap is not None:
            with timed("clap", clips):
                cosines = ev.clap.score([jobs[i].request.prompt for i in live], clips)
            for i, cosine in zip(live, cosines):
                verdicts[i].components.update(clap_cosine=cosine,
                                              adherence=rewards.ramp(cosine, *rewards.CLAP_COSINE_RANGE))
        # Speech-like "music": only clips the VAD calls mostly speech are worth an ASR pass.
        suspects = [i for i in live if verdicts[i].components["speech_ratio"] >= rewards.SPEECH_LIKE_RANGE[0]]
        heard: dict[int, Optional[str]] = {i: None for i in suspects}
        if suspects and ev.asr is not None:
            with timed("asr", [jobs[i].audio for i in suspects]):
                heard.update(zip(suspects, ev.asr.transcribe([jobs[i].audio for i in suspects])))
        for i in live:
            likeness = (rewards.speech_likeness(verdicts[i].components["speech_ratio"], heard[i], jobs[i].audio.seconds)
                        if i in heard else verdicts[i].components["speech_ratio"])
            verdicts[i].components.update(speech_likeness=likeness,
                                          speech_penalty=rewards.ramp(likeness, *rewards.SPEECH_LIKE_RANGE))
