"""The one scoring code path: a round's answers for one service -> verdicts.

Used by the validator (lib/validator/loop.py), the benchmarks and
`audionet-score`, so each scores exactly what the validator computes.
Order per round: cheap gates -> VAD gate -> duplicates/replay -> the
service's own measures (`Service.evaluate`), each evaluator called once on
all surviving clips (batched) -> `Service.combine`.

The Judge knows gates, not services: a service names the gates it wants
(`Service.gates`, from GATES below) and measures its clips itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.audio import Audio
from audionet.lib.scoring import rewards
from audionet.lib.scoring.duplicates import DuplicateFinder, fingerprint, is_copy
from audionet.lib.scoring.gates import clipped, silent, wrong_length

# Every gate a service may name, in the order they are checked and reported.
GATES = ("missing", "length", "silent", "clipped", "no_speech", "duplicate", "replay")
Measure = Callable[..., AbstractContextManager]


@dataclass
class Job:
    request: object  # the service's request model (lib.services.*)
    audio: Optional[Audio]  # None = missing/undecodable
    label: str = ""  # miner uid/hotkey or file name, for duplicate reports


@dataclass
class Clip:
    """An answer that passed the gates, handed to `Service.evaluate` to fill `components`."""

    request: object
    audio: Audio
    components: dict[str, float]


@dataclass
class Verdict:
    score: float  # raw 0..1, finite
    components: dict[str, float] = field(default_factory=dict)
    gates: dict[str, Optional[str]] = field(default_factory=dict)

    @property
    def gate(self) -> Optional[str]:
        """The first gate that fired, or None."""
        return next((reason for reason in self.gates.values() if reason), None)


class Judge:
    def __init__(self, evaluators, duplicates: Optional[DuplicateFinder] = None):
        self.evaluators = evaluators
        self.duplicates = duplicates or DuplicateFinder()

    @classmethod
    def load(cls, specs: dict[str, str] | None = None, *, device: str = "auto") -> Judge:
        from audionet.models.eval.profiles import load_evaluators

        return cls(load_evaluators(specs, device=device))

    def score(
        self, service, jobs: Sequence[Job], *, measure: Optional[Measure] = None, remember: bool = True
    ) -> list[Verdict]:
        """Raw verdicts for one round of `service` (a lib.services Service); `remember=False`
        keeps them out of the cross-round duplicate history (for one-off checks)."""
        unknown = set(service.gates) - set(GATES)
        if unknown:
            raise ValueError(f"{service.name} names unknown gates {sorted(unknown)}; known: {GATES}")

        def timed(stage: str, clips: Sequence[Audio]) -> AbstractContextManager:
            if measure is None or not clips:
                return nullcontext()
            return measure(service.name, stage, audio_seconds=float(sum(c.seconds for c in clips)))

        verdicts = [Verdict(0.0, {}, {name: None for name in service.gates}) for _ in jobs]
        for job, verdict in zip(jobs, verdicts):
            if job.audio is None:
                verdict.gates["missing"] = "no decodable audio"
                continue
            verdict.gates["length"] = wrong_length(job.audio, *service.expected_seconds(job.request))
            verdict.gates["silent"] = silent(job.audio)
            verdict.gates["clipped"] = clipped(job.audio)
        live = [i for i, v in enumerate(verdicts) if v.gate is None]
        clips = [jobs[i].audio for i in live]

        with timed("vad", clips):
            ratios = self.evaluators.vad.speech_ratio(clips) if clips else []
        for i, ratio in zip(live, ratios):
            verdicts[i].components["speech_ratio"] = float(ratio)
            if "no_speech" in service.gates and ratio < rewards.MIN_SPEECH_RATIO:
                verdicts[i].gates["no_speech"] = f"no speech: VAD finds speech in {ratio:.0%} of the clip"

        self._gate_copies(service, jobs, verdicts, live, timed, remember)
        live = [i for i in live if verdicts[i].gate is None]
        if live:
            service.evaluate(
                self.evaluators, [Clip(jobs[i].request, jobs[i].audio, verdicts[i].components) for i in live], timed
            )
        for i in live:
            verdicts[i].score = service.combine(verdicts[i].components)
        for verdict in verdicts:
            verdict.components = {k: float(v) for k, v in verdict.components.items() if math.isfinite(float(v))}
            verdict.score = 0.0 if verdict.gate else min(1.0, max(0.0, verdict.score))
        return verdicts

    def _gate_copies(self, service, jobs, verdicts, live, timed, remember: bool) -> None:
        """Near-duplicates of each other or of recent rounds; answers that replay the request's own audio."""
        clips = [jobs[i].audio for i in live]
        with timed("duplicates", clips):
            prints = {i: fingerprint(jobs[i].audio) for i in live}
            labels = [job.label or f"#{n}" for n, job in enumerate(jobs)]
            reasons = self.duplicates.check_round(
                service.name, labels, [prints.get(i) for i in range(len(jobs))], remember=remember
            )
            for i in live:
                if reasons[i] and "duplicate" in service.gates:
                    verdicts[i].gates["duplicate"] = reasons[i]
                if "replay" in service.gates and any(
                    is_copy(prints[i], fingerprint(carried)) for carried in service.carried_audio(jobs[i].request)
                ):
                    verdicts[i].gates["replay"] = "replays the reference clip"
