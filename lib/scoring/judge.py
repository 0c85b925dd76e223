"""The one scoring path: a round's jobs for one service and that service's declared judging -> verdicts.

Used by the validator (lib/validator/round.py), the benchmarks and `audionet-score`, so each scores
exactly what the validator computes. Order per round: cheap gates -> VAD gate -> duplicates and replays ->
the declared analyses, each evaluator called once on every surviving clip (batched; with evaluators on several
devices, once per device on its share: lib/scoring/replicas.py) -> the declaration's breakdown
(lib/scoring/declaration.py). A `Session` takes a round's jobs in batches as they arrive (the validator:
lib/validator/round.py); `Judge.score` is a session that takes them all at once. The Judge reads a
declaration and the jobs' expectations; it never calls back into a service. Each verdict carries the seed of
the noise its ASR heard the answer through (lib/scoring/listening.py): the job's own, or one the session draws
as the job is added (secret randomness unless the caller gives `seeds`); the same answer and seed, the same verdict.
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
from audionet.lib.scoring.listening import Listening, secret_seed
from audionet.lib.scoring.replicas import EvaluatorReplicas

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
    def __init__(self, evaluators, duplicates: Optional[DuplicateFinder] = None, listening: Listening = Listening()):
        """`evaluators`: the loaded evaluators (`models.eval.profiles.Evaluators`), or an `EvaluatorReplicas`
        of one set per device; the first runs the gates' VAD. `listening`: how the ASR hears an answer (the
        declared noise; `DEAF` hears it as sent)."""
        self.replicas = evaluators if isinstance(evaluators, EvaluatorReplicas) else EvaluatorReplicas([evaluators])
        self.evaluators = self.replicas.first
        self.duplicates = duplicates or DuplicateFinder()
        self.listening = listening

    @classmethod
    def load(cls, specs: dict[str, str] | None = None, *, devices: str = "auto") -> Judge:
        """`devices`: a comma list as `--eval.devices` takes it (auto: every visible GPU, else the CPU); one
        replica of the evaluators per device."""
        from audionet.lib.core.devices import resolve_devices
        from audionet.models.eval.profiles import load_evaluators

        chosen = resolve_devices(devices, flag="--eval.devices")
        return cls(EvaluatorReplicas([load_evaluators(specs, device=device) for device in chosen]))

    def open(
        self,
        judging: Judging,
        *,
        measure: Optional[Measure] = None,
        remember: bool = True,
        seeds: Callable[[], int] = secret_seed,
    ) -> Session:
        """One round of the service `judging` declares, judged as its answers arrive (`Session`);
        `remember=False` keeps them out of the cross-round duplicate history (for one-off checks). `seeds` draws
        the listening-noise seed of each job that brings none, as it is added (default: secret randomness)."""
        check(judging)
        return Session(self, judging, measure, remember, seeds)

    def score(
        self,
        judging: Judging,
        jobs: Sequence[Job],
        *,
        measure: Optional[Measure] = None,
        remember: bool = True,
        seeds: Callable[[], int] = secret_seed,
    ) -> list[Verdict]:
        """Verdicts for one whole round at once: a session that takes every job in one batch."""
        session = self.open(judging, measure=measure, remember=remember, seeds=seeds)
        session.add(jobs)
        session.evaluate()
        return session.close()


class Session:
    """One service's round, judged as its answers arrive. `add` runs the cheap gates and the VAD gate on a batch
    of jobs, fingerprints them and checks each against the history and the round so far; `evaluate` runs the
    declared analyses (each evaluator once, batched) on every job that passed and is not yet evaluated; `close`
    settles copies within the round (both answers of a pair lose, whichever came first: one evaluated before
    its twin arrived scores 0 all the same) and returns the verdicts in the order the jobs were added. One
    caller at a time."""

    def __init__(
        self, judge: Judge, judging: Judging, measure: Optional[Measure], remember: bool, seeds: Callable[[], int]
    ):
        self.judge, self.judging, self.measure, self.remember, self.seeds = judge, judging, measure, remember, seeds
        self.jobs: list[Job] = []
        self.verdicts: list[Verdict] = []
        self.waiting: list[int] = []  # passed every gate so far, not yet evaluated
        self.copies = judge.duplicates.open(judging.service)

    def timed(self, stage: str, clips: Sequence[Audio]) -> AbstractContextManager:
        if self.measure is None or not clips:
            return nullcontext()
        return self.measure(self.judging.service, stage, audio_seconds=float(sum(c.seconds for c in clips)))

    def add(self, jobs: Sequence[Job]) -> None:
        judging, first = self.judging, len(self.jobs)
        self.jobs.extend(jobs)
        verdicts = [
            Verdict(
                0.0, gates={name: None for name in judging.gates}, seed=self.seeds() if job.seed is None else job.seed
            )
            for job in jobs
        ]
        self.verdicts.extend(verdicts)
        with self.timed("gates", [job.audio for job in jobs if job.audio is not None]):
            for job, verdict in zip(jobs, verdicts):
                if job.audio is None:
                    verdict.gates["missing"] = "no decodable audio"
                    continue
                verdict.gates["length"] = wrong_length(job.audio, *job.expect.seconds)
                verdict.gates["silent"] = silent(job.audio)
                verdict.gates["clipped"] = clipped(job.audio)
        live = [first + n for n, v in enumerate(verdicts) if v.gate is None]
        clips = [self.jobs[i].audio for i in live]
        with self.timed("vad", clips):
            ratios = self.judge.evaluators.vad.speech_ratio(clips) if clips else []
        for i, ratio in zip(live, ratios):
            self.verdicts[i].measures["speech_ratio"] = float(ratio)
            if "no_speech" in judging.gates and ratio < MIN_SPEECH_RATIO:
                self.verdicts[i].gates["no_speech"] = f"no speech: VAD finds speech in {ratio:.0%} of the clip"
        self._gate_copies(first, live)
        self.waiting += [i for i in live if self.verdicts[i].gate is None]

    def _gate_copies(self, first: int, live: list[int]) -> None:
        """Near-duplicates of the history or of the round so far; answers that replay the request's own audio."""
        judging, finder = self.judging, self.judge.duplicates
        with self.timed("duplicates", [self.jobs[i].audio for i in live]):
            prints = {i: fingerprint(self.jobs[i].audio) for i in live}
            for i in range(first, len(self.jobs)):
                finder.check(self.copies, self.jobs[i].label or f"#{i}", prints.get(i))
            # earlier answers too: one still waiting whose twin just arrived is gated before it is evaluated
            for i in range(len(self.jobs)):
                reason = finder.reason(self.copies, i)
                if reason and "duplicate" in judging.gates:
                    self.verdicts[i].gates["duplicate"] = reason
            for i in live:
                if "replay" in judging.gates and any(
                    is_copy(prints[i], fingerprint(carried)) for carried in self.jobs[i].expect.carried
                ):
                    self.verdicts[i].gates["replay"] = "replays the reference clip"

    def evaluate(self) -> None:
        live = [i for i in self.waiting if self.verdicts[i].gate is None]
        self.waiting = []
        if not live:
            return
        listening = self.judge.listening
        survivors = [
            Clip(
                self.jobs[i].audio,
                self.jobs[i].expect,
                self.verdicts[i].measures,
                self.verdicts[i].seed or 0,
                listening,
            )
            for i in live
        ]
        runs = [a.run if isinstance(a, Analysis) else ANALYSES[a] for a in self.judging.analyses]
        self.judge.replicas.run(self.judging.service, survivors, runs, self.timed)
        for i in live:
            verdict = self.verdicts[i]
            breakdown = self.judging.breakdown(verdict.measures)
            verdict.parts, verdict.penalties, verdict.score = breakdown.parts, breakdown.penalties, breakdown.score

    def close(self) -> list[Verdict]:
        """Every verdict, with the copies found within the round since each answer was added (call `evaluate`
        first: a job still waiting is left unscored)."""
        reasons = self.judge.duplicates.close(self.copies, self.remember)
        for verdict, reason in zip(self.verdicts, reasons):
            if reason and "duplicate" in self.judging.gates:
                verdict.gates["duplicate"] = reason
            if verdict.gate:
                verdict.score = 0.0
        return self.verdicts
