"""The one scoring path: a round's jobs for one service and that service's declared judging -> verdicts.

Used by the validator (lib/validator/round.py), the benchmarks and `audionet-score`, so each scores
exactly what the validator computes. Order per round: cheap gates -> VAD gate -> duplicates and replays ->
the declared analyses, each evaluator called once on every surviving clip (batched) -> the declaration's
breakdown (lib/scoring/declaration.py). The Judge reads a declaration and the jobs' expectations; it
never calls back into a service.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Optional

from audionet.lib.core.audio import Audio
from audionet.lib.scoring.analyses import ANALYSES
from audionet.lib.scoring.declaration import Analysis, Judging
from audionet.lib.scoring.duplicates import DuplicateFinder, fingerprint, is_copy
from audionet.lib.scoring.gates import MIN_SPEECH_RATIO, clipped, silent, wrong_length
from audionet.lib.scoring.jobs import Clip, Job, Verdict

log = logging.getLogger("judge")

# Every gate a declaration may name, in the order they are checked and reported.
GATES = ("missing", "length", "silent", "clipped", "no_speech", "duplicate", "replay")
Measure = Callable[..., AbstractContextManager]


def check(judging: Judging) -> None:
    """A declaration's names exist: its gates, and its analyses (by name or as an Analysis)."""
    unknown = set(judging.gates) - set(GATES)
    if unknown:
        raise ValueError(f"{judging.service} names unknown gates {sorted(unknown)}; known: {GATES}")
    missing = [a for a in judging.analyses if not isinstance(a, Analysis) and a not in ANALYSES]
    if missing:
        raise ValueError(f"{judging.service} names unknown analyses {missing}; known: {', '.join(ANALYSES)}")


class Judge:
    def __init__(self, evaluators, duplicates: Optional[DuplicateFinder] = None):
        self.evaluators = evaluators
        self.duplicates = duplicates or DuplicateFinder()

    @classmethod
    def load(cls, specs: dict[str, str] | None = None, *, device: str = "auto") -> Judge:
        from audionet.models.eval.profiles import load_evaluators

        return cls(load_evaluators(specs, device=device))

    def score(
        self, judging: Judging, jobs: Sequence[Job], *, measure: Optional[Measure] = None, remember: bool = True
    ) -> list[Verdict]:
        """Verdicts for one round of the service `judging` declares; `remember=False` keeps them out of the
        cross-round duplicate history (for one-off checks)."""
        check(judging)

        def timed(stage: str, clips: Sequence[Audio]) -> AbstractContextManager:
            if measure is None or not clips:
                return nullcontext()
            return measure(judging.service, stage, audio_seconds=float(sum(c.seconds for c in clips)))

        verdicts = [Verdict(0.0, gates={name: None for name in judging.gates}) for _ in jobs]
        with timed("gates", [job.audio for job in jobs if job.audio is not None]):
            for job, verdict in zip(jobs, verdicts):
                if job.audio is None:
                    verdict.gates["missing"] = "no decodable audio"
                    continue
                verdict.gates["length"] = wrong_length(job.audio, *job.expect.seconds)
                verdict.gates["silent"] = silent(job.audio)
                verdict.gates["clipped"] = clipped(job.audio)
        live = [i for i, v in enumerate(verdicts) if v.gate is None]
        clips = [jobs[i].audio for i in live]

        with timed("vad", clips):
            ratios = self.evaluators.vad.speech_ratio(clips) if clips else []
        for i, ratio in zip(live, ratios):
            verdicts[i].measures["speech_ratio"] = float(ratio)
            if "no_speech" in judging.gates and ratio < MIN_SPEECH_RATIO:
                verdicts[i].gates["no_speech"] = f"no speech: VAD finds speech in {ratio:.0%} of the clip"

        self._gate_copies(judging, jobs, verdicts, live, timed, remember)
        live = [i for i in live if verdicts[i].gate is None]
        if live:
            survivors = [Clip(jobs[i].audio, jobs[i].expect, verdicts[i].measures) for i in live]
            for analysis in judging.analyses:
                run = analysis.run if isinstance(analysis, Analysis) else ANALYSES[analysis]
                run(self.evaluators, survivors, timed)
        for i in live:
            breakdown = judging.breakdown(verdicts[i].measures)
            verdicts[i].parts, verdicts[i].penalties, verdicts[i].score = (
                breakdown.parts,
                breakdown.penalties,
                breakdown.score,
            )
        return verdicts

    def _gate_copies(self, judging: Judging, jobs, verdicts, live, timed, remember: bool) -> None:
        """Near-duplicates of each other or of recent rounds; answers that replay the request's own audio."""
        clips = [jobs[i].audio for i in live]
        with timed("duplicates", clips):
            prints = {i: fingerprint(jobs[i].audio) for i in live}
            labels = [job.label or f"#{n}" for n, job in enumerate(jobs)]
            reasons = self.duplicates.check_round(
                judging.service, labels, [prints.get(i) for i in range(len(jobs))], remember=remember
            )
            for i in live:
                if reasons[i] and "duplicate" in judging.gates:
                    verdicts[i].gates["duplicate"] = reasons[i]
                if "replay" in judging.gates and any(
                    is_copy(prints[i], fingerprint(carried)) for carried in jobs[i].expect.carried
                ):
                    verdicts[i].gates["replay"] = "replays the reference clip"
