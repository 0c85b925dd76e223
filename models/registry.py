"""Spec strings -> backends: `baseline:<name>` or `py:<module>:<factory>`.

Specs come from flags, never from the wire. `py:` lets an operator plug in a
backend of their own without forking (the factory is called with the device
and must return a SpeechSynthesizer / VoiceCloner / MusicGenerator).
The neural schemes (`hf:`, `kokoro:`) register here in the backends issue.
"""
from __future__ import annotations

import importlib
from typing import Callable

from lib.errors import BackendError
from models.base import Backend, MusicGenerator, SpeechSynthesizer, VoiceCloner

KINDS: dict[str, type[Backend]] = {"tts": SpeechSynthesizer, "vc": VoiceCloner, "music": MusicGenerator}


def _espeak(device: str) -> Backend:
    from models.baselines.espeak import EspeakSynthesizer

    return EspeakSynthesizer()


def _world_vc(device: str) -> Backend:
    from models.baselines.world_vc import WorldVoiceCloner

    return WorldVoiceCloner()


def _synth(device: str) -> Backend:
    from models.baselines.synth import ProceduralMusicGenerator

    return ProceduralMusicGenerator()


BASELINES: dict[tuple[str, str], Callable[[str], Backend]] = {
    ("tts", "espeak"): _espeak,
    ("vc", "world"): _world_vc,
    ("music", "synth"): _synth,
}
DEFAULT_SPECS = {"tts": "baseline:espeak", "vc": "baseline:world", "music": "baseline:synth"}


def _from_python(target: str, device: str) -> Backend:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise BackendError(f"py: spec must look like py:package.module:factory, got py:{target}")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise BackendError(f"cannot import backend py:{target}: {error}") from None
    return factory(device=device)


def load_backend(kind: str, spec: str, *, device: str = "cpu", warmup: bool = True) -> Backend:
    """Build, check and warm up the backend that `spec` names for service `kind`."""
    if kind not in KINDS:
        raise BackendError(f"unknown service {kind!r}; expected one of {', '.join(KINDS)}")
    scheme, _, rest = spec.partition(":")
    if scheme == "baseline":
        factory = BASELINES.get((kind, rest))
        if factory is None:
            names = ", ".join(f"baseline:{n}" for k, n in BASELINES if k == kind)
            raise BackendError(f"no {kind} baseline named {rest!r}; available: {names}")
        backend = factory(device)
    elif scheme == "py":
        backend = _from_python(rest, device)
    else:
        raise BackendError(f"unknown model spec {spec!r} for {kind}; use baseline:<name> or py:<module>:<factory>")
    if not isinstance(backend, KINDS[kind]):
        raise BackendError(f"{spec} is not a {KINDS[kind].__name__}")
    if warmup:
        backend.warmup()
    return backend
