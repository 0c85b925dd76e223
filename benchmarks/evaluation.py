"""Evaluation as the benchmark times it: one entry point, `Evaluation.evaluate`.

When the validator's Judge (`lib.scoring.judge`) is installed it does the
work and times its own evaluators through `measure`. Until then a STAND-IN
runs what this branch has: the spine's gates for every service plus the
d-vector speaker similarity for VC. The stand-in's numbers are labelled as
such in every table (`Evaluation.label`); the Judge replaces it with no change
here or in the benchmark.
"""
from __future__ import annotations

from typing import Callable, ContextManager, Sequence

from lib.audio import Audio
from lib.scoring.gates import first_gate

try:  # the Judge lands with the evaluators issue
    from lib.scoring.judge import Job, Judge
except ImportError:
    Job = Judge = None

Measure = Callable[..., ContextManager]


class Evaluation:
    def __init__(self, device: str = "cpu"):
        self.judge = Judge.load(device=device) if Judge is not None else None
        self._speaker = None

    def label(self, service: str) -> str:
        if self.judge is not None:
            return "Judge"
        return "stand-in: gates + d-vector speaker similarity" if service == "vc" else "stand-in: gates"

    def _speaker_encoder(self):
        if self._speaker is None:
            from models.eval.speaker_dvector import DVectorEncoder

            self._speaker = DVectorEncoder()
            self._speaker.warmup()
        return self._speaker

    def evaluate(self, service: str, requests: Sequence, clips: Sequence[Audio], measure: Measure) -> list[float]:
        """A score in [0, 1] per clip; per-evaluator stages are timed through `measure`."""
        if self.judge is not None:
            jobs = [Job(request, audio, f"bench-{i}") for i, (request, audio) in enumerate(zip(requests, clips))]
            return [verdict.score for verdict in self.judge.score(service, jobs, measure=measure)]
        return self._stand_in(service, requests, clips, measure)

    def _stand_in(self, service: str, requests: Sequence, clips: Sequence[Audio], measure: Measure) -> list[float]:
        seconds = sum(clip.seconds for clip in clips)
        with measure(service, "evaluation/gates", audio_seconds=seconds):
            gates = [first_gate(service, request, clip) for request, clip in zip(requests, clips)]
        if service != "vc":
            return [0.0 if gate else 1.0 for gate in gates]
        encoder = self._speaker_encoder()
        with measure(service, "evaluation/speaker", audio_seconds=seconds):
            similarity = [encoder.similarity(request.reference(), clip) for request, clip in zip(requests, clips)]
        return [0.0 if gate else max(0.0, s) for gate, s in zip(gates, similarity)]
