"""The measures an attacker can differentiate, per loaded evaluator: name -> torch function of an answer's
samples (at the answer's rate), each the same computation the evaluator runs (or a port of it: ports.py).

Speech (16 kHz): every MOS predictor with a torch path (DistillMOS, the naturalness student) and the
speaker cosine of the d-vector port against the reference's real embedding. Music: music_measures.py
(musicnn's tags, YAMNet's music probability, basic-pitch's notes and key), through the music floor where the
declaration has one. Everything else is held at the clean answer's value.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from audionet.benchmarks.attacks.music_measures import (
    content_functions,
    note_functions,
    tag_functions,
    yamnet_functions,
)
from audionet.benchmarks.attacks.ports import dvector_port, resampled
from audionet.lib.core.audio import resample


@cache
def _dvector():
    return dvector_port()


def mos_functions(evaluators, rate: int) -> dict:
    from audionet.models.eval.distillmos import SAMPLE_RATE, DistillMos
    from audionet.models.eval.robust_mos import RobustMos

    functions = {}
    for predictor in evaluators.mos:
        if isinstance(predictor, DistillMos):
            functions[f"mos_{predictor.name}"] = lambda x, p=predictor: p.score(resampled(x, rate, SAMPLE_RATE))
        elif isinstance(predictor, RobustMos):
            functions[f"mos_{predictor.name}"] = lambda x, p=predictor: p.network(
                resampled(x, rate, SAMPLE_RATE)[None]
            )[0]
    return functions


def speaker_functions(evaluators, expect, rate: int) -> dict:
    import torch

    from audionet.models.eval.speaker_dvector import SAMPLE_RATE, DVectorEncoder

    if not isinstance(evaluators.speaker, DVectorEncoder) or expect.reference is None:
        return {}
    target = evaluators.speaker.embed([resample(expect.reference, SAMPLE_RATE)])[0]
    target = torch.from_numpy((target / max(float(np.linalg.norm(target)), 1e-9)).astype(np.float32))
    port = _dvector()
    return {"speaker_cosine": lambda samples: port(resampled(samples, rate, SAMPLE_RATE)) @ target}


def differentiable(evaluators, judging, expect, rate: int = 16_000) -> dict:
    """name -> function of the samples for every measure of `judging` this attacker differentiates."""
    analyses = set(judging.analyses)
    functions = {}
    if "mos" in analyses:
        functions.update(mos_functions(evaluators, rate))
    if "speaker" in analyses:
        functions.update(speaker_functions(evaluators, expect, rate))
    music = {}
    if "tags" in analyses:
        music.update(tag_functions(evaluators, expect, rate))
    if "sounds" in analyses:
        music.update(yamnet_functions(evaluators, rate))
    floor = "music_floor" in analyses
    if "notes" in analyses:
        music.update(note_functions(evaluators, expect, rate))
    if "content" in analyses:
        music.update(content_functions(expect, rate))
    return {**functions, **(through_floor(music) if floor else music)}


def through_floor(functions: dict) -> dict:
    """The music measures as the Judge computes them where it declares `music_floor`: of the floored samples
    (models/eval/music_floor.py), differentiated through the floor (computed once per samples tensor)."""
    import torch

    from audionet.models.eval.music_floor import floored

    last: dict = {}

    def heard(samples):
        if last.get("samples") is not samples or last.get("grad") != torch.is_grad_enabled():
            last.update(samples=samples, grad=torch.is_grad_enabled(), value=floored(samples))
        return last["value"]

    return {name: (lambda samples, f=function: f(heard(samples))) for name, function in functions.items()}
