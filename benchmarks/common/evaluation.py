"""Evaluation as the benchmark times it: the validator's own Judge, not a copy.

Each evaluator call inside `Judge.score` is timed through `measure` as stage
`evaluation/<evaluator>` (asr, mos, speaker, vad, ...), so the per-stage table
shows where evaluation time goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Optional

from audionet.benchmarks.common.timing import timed_calls
from audionet.lib.core.audio import Audio
from audionet.lib.core.config import split_list
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.timing import Timer
from audionet.lib.scoring.declaration import Judging, Range
from audionet.lib.scoring.jobs import Verdict
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.listening import DEAF, seeds_from

Measure = Callable[..., AbstractContextManager]


def judge_from_flags(args) -> tuple[Judge, str]:
    """The validator's Judge for a study's --eval flags, and the name of the profile it runs."""
    from audionet.models.eval.profiles import EvalSettings

    evaluation = EvalSettings.from_flags(args)
    return Judge.load(evaluation.specs(), devices=evaluation.devices), evaluation.chosen_profile()


FLOORS = ("music_floor",)  # analyses that only change what other judges hear (a defence, not a measure)
REPLACED = {  # a defended measure -> what was read before it
    "onsets_per_s": ("notes_per_s", Range(2.0, 8.0)),
    "key_clarity": ("key_clarity", Range(0.5, 0.8)),
    "key_fit": ("key_fit", Range(0.0, 0.7)),
}
REPLACED_ANALYSES = {"content": "notes"}  # the signal's content, read from basic-pitch's notes before


def undefended(judge: Judge) -> Judge:
    """The Judge before issue 46's defence: the same evaluators without the robust judges (`guard`), whose
    ceilings then do not apply, musicnn without its band floor, and the ASR hearing the answer as sent (no
    listening noise)."""
    from audionet.models.eval.musicnn import MusicnnTagger
    from audionet.models.eval.profiles import Evaluators

    def bare(value):
        if isinstance(value, tuple):
            return tuple(m for m in value if not getattr(m, "guard", False))
        return value.unfloored() if isinstance(value, MusicnnTagger) else value

    first = judge.evaluators
    kept = {kind: bare(value) for kind, value in first.by_kind.items()}
    return Judge(Evaluators(kept, first.vad, first.music_quality, first.device), listening=DEAF)


def stripped(judging: Judging) -> Judging:
    """`judging` without its ceilings, gates and floors: how a service was scored before the defence (with
    `undefended`, the attack study's undefended Judge and the evaluators study's undefended column)."""
    parts = tuple(
        dataclasses.replace(
            part, ceiling=None, gate=0.0, measures=dict(REPLACED.get(n, (n, r)) for n, r in part.measures.items())
        )
        for part in judging.parts
    )
    analyses = tuple(REPLACED_ANALYSES.get(a, a) for a in judging.analyses if a not in FLOORS)
    return dataclasses.replace(judging, parts=parts, analyses=analyses)


def one_eval_device(args, study: str) -> str:
    """The one device of --eval.devices, for a study that measures what evaluation costs on a device."""
    devices = split_list(args.eval_devices)
    if len(devices) != 1:
        raise ConfigError(f"--eval.devices: {study} measures one device at a time; give one, not {args.eval_devices!r}")
    return devices[0]


class Evaluation:
    def __init__(self, device: str = "cpu", specs: Optional[dict[str, str]] = None, defended: bool = True):
        """`defended=False`: the Judge before issue 46's defence (`undefended`, `stripped`), what the defence's
        cost is measured against."""
        judge = Judge.load(specs, devices=device)
        self.judge, self.defended, self.device = (judge if defended else undefended(judge)), defended, device

    def label(self) -> str:
        """Short, for table rows; `describe()` names every model, for the table header."""
        return "validator Judge"

    def describe(self) -> str:
        models = self.judge.evaluators.describe()
        return "validator Judge (" + ", ".join(f"{k} {v}" for k, v in models.items() if v != "none") + ")"

    def verdicts(self, service, requests: Sequence, clips: Sequence[Audio], measure: Measure) -> list[Verdict]:
        """`service`: a lib.services Service; every clip is judged as one round of it."""

        def staged(service_: str, stage: str, **kw) -> AbstractContextManager:
            return measure(service_, f"evaluation/{stage}", sync=self.device, **kw)  # GPU stage times are GPU times

        jobs = [service.job(request, audio, f"bench-{i}") for i, (request, audio) in enumerate(zip(requests, clips))]
        # remember=False: repeated benchmark runs of one backend are not copies of each other. The listening noise's
        # seeds are the same stream every call: the same clips are judged the same (the determinism re-run).
        judging = service.judging if self.defended else stripped(service.judging)
        return self.judge.score(judging, jobs, measure=staged, remember=False, seeds=seeds_from(0))

    def timed(self, service, rounds: Sequence[tuple[Sequence, Sequence[Audio]]], timer: Timer, warmup: int, tick=None):
        """Judge each of `rounds` ((requests, clips) each) once, timed, after `warmup` untimed passes over the
        first (their stages on a scratch timer); each evaluator inside the Judge is a stage on `timer`."""

        def judge(index: int, measure: Measure = timer.measure) -> list[Verdict]:
            return self.verdicts(service, *rounds[index], measure)

        scratch, tick = Timer("bench-warmup"), tick or (lambda: None)
        timed_calls(lambda index: judge(index, scratch.measure), runs=0, warmup=warmup, tick=tick)
        return timed_calls(judge, runs=len(rounds), device=self.device, tick=tick)
