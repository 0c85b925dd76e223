"""Spec strings -> generation backends (one factory, switched on the spec's scheme).

    baseline:<name>          offline floors: espeak (TTS), world (voice clone), synth (music)
    hf:<HF id or local dir>  a diffusers pipeline (model_index.json's class picks the backend: StableAudioPipeline,
                             AceStepPipeline), a Coqui TTS model (its config.json's `model`: xtts, vits, through the
                             coqui-tts package) or a transformers model (the config's model_type picks it:
                             musicgen / musicgen_melody, vits / speecht5, dia, csm, vibevoice,
                             pocket_tts, gradium_phonon_tts, higgs_audio_v2,
                             omnivoice)
    hf:musicgen              the MusicGen checkpoint of the preset (fast / balanced / quality =
                             small / medium / large)
    kokoro:<voice>           Kokoro-82M ONNX TTS (empty voice: jf_alpha); on the GPU where onnxruntime-gpu is installed
    kokoro-clone:[top-k]     offline voice clone: Kokoro voices blended by speaker similarity, F0 matched
    f5-tts:<HF id or dir>    F5-TTS voice clone through the f5-tts package (SWivid/F5-TTS's layout: F5TTS_v1_Base/)
    voxcpm:<HF id or dir>    VoxCPM2 TTS and voice clone through the voxcpm package (openbmb/VoxCPM2's layout)
    py:<module>:<factory>    an operator's own backend (called with device=...)
    loop:<spec>              a cheat, for local subnets and studies: one second of <spec>'s answer, looped

The caller says which interface it needs (a service's `backend_interface`);
a spec that builds something else is a one-line BackendError. Specs come
from flags, never from the wire.
"""

from __future__ import annotations

import importlib
from typing import Optional

from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.base import Backend
from audionet.models.specs import split_spec

# name -> "module:factory"; the factory is called with device=...
BASELINES: dict[str, str] = {
    "espeak": "audionet.models.baselines.espeak:EspeakSynthesizer",
    "world": "audionet.models.baselines.world_vc:WorldVoiceCloner",
    "synth": "audionet.models.baselines.synth:ProceduralMusicGenerator",
}
# model_type in an HF config -> "module:class" of the backend that serves it.
HF_BACKENDS: dict[str, str] = {
    "musicgen": "audionet.models.hf.musicgen:MusicGenMusicGenerator",
    "musicgen_melody": "audionet.models.hf.musicgen:MusicGenMusicGenerator",
    "vits": "audionet.models.hf.tts:VitsSynthesizer",
    "speecht5": "audionet.models.hf.tts:SpeechT5Synthesizer",
    "dia": "audionet.models.hf.vc:DiaVoiceCloner",
    "csm": "audionet.models.hf.csm:CsmVoiceCloner",
    "vibevoice": "audionet.models.hf.vibevoice:VibeVoiceVoiceCloner",
    "pocket_tts": "audionet.models.hf.pocket_tts:PocketTtsVoiceCloner",
    "gradium_phonon_tts": "audionet.models.hf.pocket_tts:PhononSynthesizer",
    "higgs_audio_v2": "audionet.models.hf.higgs_audio:HiggsAudioV2Speech",  # TTS and voice clone
    "omnivoice": "audionet.models.hf.omni_voice:OmniVoiceSpeech",  # the omnivoice package's; TTS and voice clone
}
# `model` in a Coqui TTS config.json (which has no model_type) -> "module:class" of the backend that serves it.
COQUI_BACKENDS: dict[str, str] = {
    "xtts": "audionet.models.coqui.xtts:XttsSpeech",  # TTS (its speakers) and voice clone
    "vits": "audionet.models.coqui.vits:CoquiVitsSynthesizer",  # TTS
}
# _class_name in a diffusers model_index.json -> "module:class" of the backend that serves it.
DIFFUSERS_BACKENDS: dict[str, str] = {
    "StableAudioPipeline": "audionet.models.hf.diffusion:StableAudioMusicGenerator",
    "AceStepPipeline": "audionet.models.hf.diffusion:AceStepMusicGenerator",
}
# A scheme of a family served through its own package (no transformers config to route hf: on) -> "module:class"
# of its backend and an example id for the error when the spec names none.
PACKAGE_BACKENDS: dict[str, tuple[str, str]] = {
    "f5-tts": ("audionet.models.f5.clone:F5VoiceCloner", "SWivid/F5-TTS"),  # voice clone
    "voxcpm": ("audionet.models.voxcpm.speech:VoxCpmSpeech", "openbmb/VoxCPM2"),  # TTS and voice clone
}
HF_PRESET_ALIASES = ("musicgen",)  # hf:musicgen -> the checkpoint of the preset
PRESET_AWARE_HF = ("musicgen", "musicgen_melody")  # backend classes that take preset=


def _attribute(target: str):
    module_name, _, name = target.partition(":")
    return getattr(importlib.import_module(module_name), name)


def _checked(cls, interface: type[Backend], spec: str, label: str):
    """`cls` if it implements `interface`; checked before anything loads (a wrong slot costs nothing)."""
    if isinstance(cls, type) and not issubclass(cls, interface):
        what = f"a {label} backend ({interface.__name__})" if label else f"a {interface.__name__}"
        raise BackendError(f"{spec} is a {cls.__name__}, not {what}")
    return cls


def _from_python(target: str, device: str) -> Backend:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise BackendError(f"py: spec must look like py:package.module:factory, got py:{target}")
    try:
        factory = _attribute(target)
    except (ImportError, AttributeError) as error:
        raise BackendError(f"cannot import backend py:{target}: {error}") from None
    return factory(device=device)


def _from_hf(name: str, check, device: str, dtype: str, preset: str) -> Backend:
    from audionet.lib.core.devices import resolve_device
    from audionet.models.hf.loading import coqui_model, model_type, pipeline_class
    from audionet.models.hf.musicgen import CHECKPOINTS

    if not name:
        raise BackendError("hf: spec needs a model id or a local directory, e.g. hf:facebook/musicgen-small")
    by_preset = name in HF_PRESET_ALIASES
    if by_preset:
        if preset not in CHECKPOINTS:
            raise BackendError(f"unknown music preset {preset!r}; use {', '.join(CHECKPOINTS)}")
        name = CHECKPOINTS[preset].model_id
    pipeline = pipeline_class(name)
    if pipeline is not None:
        if pipeline not in DIFFUSERS_BACKENDS:
            supported = ", ".join(sorted(DIFFUSERS_BACKENDS))
            raise BackendError(f"model {name} is a diffusers {pipeline or 'pipeline'}; supported: {supported}")
        cls, extra = _attribute(DIFFUSERS_BACKENDS[pipeline]), {"preset": preset}
    elif (coqui := coqui_model(name)) is not None:
        if coqui not in COQUI_BACKENDS:
            raise BackendError(f"model {name} is Coqui TTS {coqui!r}; supported: {', '.join(sorted(COQUI_BACKENDS))}")
        cls, extra = _attribute(COQUI_BACKENDS[coqui]), {}
    else:
        found = model_type(name)
        if found not in HF_BACKENDS:
            raise BackendError(f"model {name} has model_type {found!r}; supported: {', '.join(sorted(HF_BACKENDS))}")
        cls, extra = _attribute(HF_BACKENDS[found]), {"preset": preset} if found in PRESET_AWARE_HF else {}
    backend = check(cls)(name, device=resolve_device(device), dtype=dtype, **extra)
    if by_preset:
        backend.presets, backend.preset = tuple(CHECKPOINTS), preset
    return backend


def _from_package(scheme: str, name: str, check, device: str, dtype: str) -> Backend:
    from audionet.lib.core.devices import resolve_device

    target, example = PACKAGE_BACKENDS[scheme]
    if not name:
        raise BackendError(f"{scheme}: spec needs a model id or a local directory, e.g. {scheme}:{example}")
    return check(_attribute(target))(name, device=resolve_device(device), dtype=dtype)


def _from_kokoro(scheme: str, rest: str, check, preset: Optional[str], device: str) -> Backend:
    from audionet.lib.core.devices import resolve_device

    device = resolve_device(device)
    if scheme == "kokoro":
        from audionet.models.kokoro.tts import KokoroSynthesizer

        return check(KokoroSynthesizer)(rest, device=device)
    from audionet.models.kokoro.clone import DEFAULT_TOP_K, KokoroVoiceCloner

    if rest and not rest.isdigit():
        raise BackendError(f"kokoro-clone: takes a top-k number, got {rest!r}")
    return check(KokoroVoiceCloner)(
        top_k=int(rest) if rest else DEFAULT_TOP_K, preset=preset or "balanced", device=device
    )


def load_backend(
    spec: str,
    interface: type[Backend] = Backend,
    *,
    device: str = "cpu",
    dtype: str = "auto",
    preset: Optional[str] = None,
    warmup: bool = True,
    label: str = "",
) -> Backend:
    """Build, check and warm up the backend that `spec` names; it must be an `interface`.

    `device` (auto | cpu | cuda | cuda:N) and `dtype` (auto | float32 | float16 |
    bfloat16) are chosen once here. `preset` (fast | balanced | quality; None = balanced)
    picks the MusicGen checkpoint for hf:musicgen and the kokoro-clone search; a backend
    without presets ignores it (its `presets` is empty). `label` names the service in errors."""

    def check(cls):
        return _checked(cls, interface, spec, label)

    scheme, rest = split_spec(spec)
    # A package the backend imports that is not installed: one line naming it and its requirement.
    with needs(f"{label} backend {spec}" if label else spec):
        if scheme == "baseline":
            if rest not in BASELINES:
                raise BackendError(
                    f"no baseline named {rest!r}; available: {', '.join(f'baseline:{n}' for n in BASELINES)}"
                )
            backend = check(_attribute(BASELINES[rest]))()
        elif scheme == "py":
            backend = _from_python(rest, device)
        elif scheme == "hf":
            backend = _from_hf(rest, check, device, dtype, preset or "balanced")
        elif scheme in ("kokoro", "kokoro-clone"):
            backend = _from_kokoro(scheme, rest, check, preset, device)
        elif scheme in PACKAGE_BACKENDS:
            backend = _from_package(scheme, rest, check, device, dtype)
        elif scheme == "loop":
            from audionet.models.baselines.looped import looped

            inner = load_backend(rest, interface, device=device, dtype=dtype, preset=preset, warmup=False, label=label)
            backend = looped(inner)
        else:
            raise BackendError(
                f"unknown model spec {spec!r}; use baseline:<name>, hf:<id or dir>, kokoro:<voice>, kokoro-clone:, "
                "f5-tts:<id or dir>, voxcpm:<id or dir>, py:<module>:<factory> or loop:<spec>"
            )
    check(type(backend))  # py: factories are only known once called
    if warmup:
        backend.warmup()
    return backend
