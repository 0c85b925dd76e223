"""Evaluator specs -> loaded evaluators: `LOADERS` is the one factory, kind -> scheme -> loader(rest, device),
specs split by models/specs.py as the generation factory splits its own. Every kind takes `none` (off), and a
kind in `MANY` takes a comma list (every MOS predictor is asked; naturalness is their mean, harder to game than
one). Which spec each kind gets is the evaluation profile's (profiles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audionet.lib.core.config import split_list
from audionet.lib.core.errors import BackendError
from audionet.models.specs import split_spec


def _whisper(rest: str, device: str):
    from audionet.models.eval.whisper_asr import SHIPPED, load_whisper

    return load_whisper(rest or SHIPPED, device)


def _distillmos(rest: str, device: str):
    from audionet.models.eval.distillmos import DistillMos

    return DistillMos(device=device)


def _yamnet(rest: str, device: str):
    from audionet.models.eval.yamnet import YamNet

    return YamNet(device=device)


def _musicnn(rest: str, device: str):
    from audionet.models.eval.musicnn import MusicnnTagger

    return MusicnnTagger(tuple(split_list(rest)) or ("mtt", "msd"), device=device)


def _basic_pitch(rest: str, device: str):
    from audionet.models.eval.basic_pitch import BasicPitch

    return BasicPitch(device=device)


def _student(rest: str, device: str):
    from audionet.models.eval.robust_mos import RobustMos

    return RobustMos(device=device)


def _dnsmos(rest: str, device: str):
    from audionet.models.eval.dnsmos import DnsMos

    return DnsMos(device=device)


def _utmos(rest: str, device: str):
    from audionet.models.eval.utmos import DEFAULT_ID, UtmosPredictor

    return UtmosPredictor(rest or DEFAULT_ID, device=device)


def _dvector(rest: str, device: str):
    from audionet.models.eval.speaker_dvector import DVectorEncoder

    return DVectorEncoder()


def _resemblyzer(rest: str, device: str):
    from audionet.models.eval.speaker_resemblyzer import ResemblyzerEncoder

    return ResemblyzerEncoder(device=device)


def _wavlm(rest: str, device: str):
    from audionet.models.eval.hf_models import WavLMSpeakerEncoder

    if not rest:
        raise BackendError("wavlm: needs an HF id or folder, e.g. wavlm:microsoft/wavlm-base-plus-sv")
    return WavLMSpeakerEncoder(rest, device=device)


def _clap(rest: str, device: str):
    from audionet.models.eval.hf_models import ClapScorer

    if not rest:
        raise BackendError("clap: needs an HF id or folder, e.g. clap:laion/larger_clap_music")
    return ClapScorer(rest, device=device)


def _audiobox(rest: str, device: str):
    from audionet.models.eval.aesthetics import DEFAULT_ID, AudioboxAesthetics

    return AudioboxAesthetics(rest or DEFAULT_ID, device=device)


Loader = Callable[[str, str], Any]
# kind -> scheme -> loader(rest, device); the spec forms each kind takes, for error lines.
LOADERS: dict[str, dict[str, Loader]] = {
    "asr": {"whisper": _whisper},
    "mos": {"distillmos": _distillmos, "dnsmos": _dnsmos, "utmos": _utmos, "student": _student},
    "speaker": {"dvector": _dvector, "resemblyzer": _resemblyzer, "wavlm": _wavlm},
    "clap": {"clap": _clap, "hf": _clap},
    "aesthetics": {"audiobox": _audiobox},
    "sounds": {"yamnet": _yamnet},
    "tags": {"musicnn": _musicnn},
    "notes": {"basic-pitch": _basic_pitch},
}
FORMS = {
    "asr": "whisper:<model id or folder>",
    "mos": "a comma list of distillmos, dnsmos, utmos:<HF id, folder or file>, student (the robust ceiling)",
    "speaker": "dvector, resemblyzer or wavlm:<HF id or folder>",
    "clap": "clap:<HF id or folder>",
    "aesthetics": "audiobox:<HF id or folder>",
    "sounds": "yamnet (AudioSet classes: music, speech, noise)",
    "tags": "musicnn[:mtt,msd] (music tags)",
    "notes": "basic-pitch (note transcription)",
}
MANY = ("mos",)  # kinds that take a comma list and load a tuple
OPTIONAL = ("asr", "mos", "clap", "aesthetics", "sounds", "tags", "notes")  # kinds that may be "none"
KINDS = tuple(LOADERS)


def load_evaluator(kind: str, spec: str, device: str):
    """The evaluator(s) `spec` names for `kind`: one evaluator or None (off), or a tuple for MANY kinds."""
    if kind not in LOADERS:
        raise BackendError(f"unknown evaluator kind {kind!r}; expected {', '.join(KINDS)}")
    parts = split_list(spec) if kind in MANY else [spec]
    loaded = []
    for part in parts:
        scheme, rest = split_spec(part, f"--eval.{kind}")
        if scheme == "none" and kind in OPTIONAL:
            continue
        if scheme not in LOADERS[kind]:
            off = " or none" if kind in OPTIONAL else ""
            raise BackendError(f"unknown --eval.{kind} spec {part.strip()!r}; use {FORMS[kind]}{off}")
        loaded.append(LOADERS[kind][scheme](rest, device))
    if kind in MANY:
        return tuple(loaded)
    return loaded[0] if loaded else None
