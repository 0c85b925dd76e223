"""Evaluation profiles and evaluator spec strings -> loaded evaluators (validator, bench, score).

A profile is a named set of evaluator specs; a `--eval.<kind>` flag overrides one kind.

| kind       | offline (shipped, dev only) | standard (real networks)                  | large                |
|------------|-----------------------------|-------------------------------------------|----------------------|
| asr        | whisper:tiny.en             | whisper:large-v3-turbo                    | whisper:large-v3     |
| mos        | dnsmos                      | utmos:Blinorot/UTMOS-PyTorch,dnsmos       | (as standard)        |
| speaker    | dvector                     | wavlm:microsoft/wavlm-base-plus-sv        | (as standard)        |
| clap       | none                        | clap:laion/larger_clap_music              | (as standard)        |
| aesthetics | none                        | audiobox:facebook/audiobox-aesthetics     | (as standard)        |

Other specs: asr `whisper:<size, id or folder>` | none (CTranslate2 on the CPU, transformers on CUDA:
models/eval/whisper_asr.py); mos a comma list of `dnsmos`,
`utmos:<HF id, folder or file>` | none; speaker `dvector` | `resemblyzer` | `wavlm:<HF id or
folder>`; clap `clap:<HF id or folder>` | none; aesthetics `audiobox:<HF id or folder>` | none.
Specs come from flags, never from the wire. VAD (silero) and the music signal statistics are
always loaded: the gates depend on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.errors import BackendError
from audionet.models.eval.base import (
    AestheticsPredictor,
    MosPredictor,
    SpeakerEncoder,
    TextAudioScorer,
    Transcriber,
    VoiceActivityDetector,
)
from audionet.models.eval.music_quality import SignalMusicQuality

KINDS = ("asr", "mos", "speaker", "clap", "aesthetics")
_STANDARD = {
    "asr": "whisper:large-v3-turbo",
    "mos": "utmos:Blinorot/UTMOS-PyTorch,dnsmos",
    "speaker": "wavlm:microsoft/wavlm-base-plus-sv",
    "clap": "clap:laion/larger_clap_music",
    "aesthetics": "audiobox:facebook/audiobox-aesthetics",
}
PROFILES: dict[str, dict[str, str]] = {
    "offline": {"asr": "whisper:tiny.en", "mos": "dnsmos", "speaker": "dvector", "clap": "none", "aesthetics": "none"},
    "standard": _STANDARD,
    # The largest public checkpoints of the same kinds: only Whisper comes bigger. WavLM-Base+ SV is
    # the largest WavLM x-vector checkpoint in transformers' format; UTMOS, CLAP-music and Audiobox
    # Aesthetics come in one size.
    "large": {**_STANDARD, "asr": "whisper:large-v3"},
}
DEFAULT_PROFILE = "offline"  # where no chain says otherwise (audionet-score, audionet-bench)


@dataclass
class Evaluators:
    asr: Optional[Transcriber]
    mos: tuple[MosPredictor, ...]
    speaker: SpeakerEncoder
    clap: Optional[TextAudioScorer]
    aesthetics: Optional[AestheticsPredictor]
    vad: VoiceActivityDetector
    music_quality: SignalMusicQuality
    device: str

    def describe(self) -> dict[str, str]:
        out = {}
        for name in ("asr", "mos", "speaker", "clap", "aesthetics", "vad", "music_quality"):
            value = getattr(self, name)
            models = value if isinstance(value, tuple) else (value,) if value is not None else ()
            out[name] = ",".join(m.model_id for m in models) or "none"
        return out

    def all(self) -> list:
        return [
            e
            for e in (self.asr, *self.mos, self.speaker, self.clap, self.aesthetics, self.vad, self.music_quality)
            if e is not None
        ]


def _split(kind: str, spec: str) -> tuple[str, str]:
    scheme, _, rest = spec.strip().partition(":")
    if not scheme:
        raise BackendError(f"empty --eval.{kind} spec")
    return scheme, rest


def load_asr(spec: str, device: str) -> Optional[Transcriber]:
    scheme, rest = _split("asr", spec)
    if scheme == "none":
        return None
    if scheme == "whisper":
        from audionet.models.eval.whisper_asr import SHIPPED, load_whisper

        return load_whisper(rest or SHIPPED, device)
    raise BackendError(f"unknown --eval.asr spec {spec!r}; use whisper:<model id or folder> or none")


def load_mos(spec: str, device: str) -> tuple[MosPredictor, ...]:
    """A comma list: every predictor is asked, naturalness is their mean (harder to game one)."""
    predictors = []
    for one in (part.strip() for part in spec.split(",") if part.strip()):
        scheme, rest = _split("mos", one)
        if scheme == "none":
            continue
        if scheme == "dnsmos":
            from audionet.models.eval.dnsmos import DnsMos

            predictors.append(DnsMos(device=device))
        elif scheme == "utmos":
            from audionet.models.eval.utmos import DEFAULT_ID, UtmosPredictor

            predictors.append(UtmosPredictor(rest or DEFAULT_ID, device=device))
        else:
            raise BackendError(f"unknown --eval.mos spec {one!r}; use dnsmos, utmos:<HF id, folder or file> or none")
    return tuple(predictors)


def load_speaker(spec: str, device: str) -> SpeakerEncoder:
    scheme, rest = _split("speaker", spec)
    if scheme == "dvector":
        from audionet.models.eval.speaker_dvector import DVectorEncoder

        return DVectorEncoder()
    if scheme == "resemblyzer":
        from audionet.models.eval.speaker_resemblyzer import ResemblyzerEncoder

        return ResemblyzerEncoder(device=device)
    if scheme == "wavlm" and rest:
        from audionet.models.eval.hf_models import WavLMSpeakerEncoder

        return WavLMSpeakerEncoder(rest, device=device)
    raise BackendError(f"unknown --eval.speaker spec {spec!r}; use dvector, resemblyzer or wavlm:<HF id or folder>")


def load_clap(spec: str, device: str) -> Optional[TextAudioScorer]:
    scheme, rest = _split("clap", spec)
    if scheme == "none":
        return None
    if scheme in ("clap", "hf") and rest:
        from audionet.models.eval.hf_models import ClapScorer

        return ClapScorer(rest, device=device)
    raise BackendError(f"unknown --eval.clap spec {spec!r}; use clap:<HF id or folder> or none")


def load_aesthetics(spec: str, device: str) -> Optional[AestheticsPredictor]:
    scheme, rest = _split("aesthetics", spec)
    if scheme == "none":
        return None
    if scheme == "audiobox":
        from audionet.models.eval.aesthetics import DEFAULT_ID, AudioboxAesthetics

        return AudioboxAesthetics(rest or DEFAULT_ID, device=device)
    raise BackendError(f"unknown --eval.aesthetics spec {spec!r}; use audiobox:<HF id or folder> or none")


def resolve_specs(profile: str = DEFAULT_PROFILE, overrides: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The profile's specs with `overrides` (kind -> spec; empty values ignored) on top."""
    if profile not in PROFILES:
        raise BackendError(f"unknown evaluation profile {profile!r}; use {', '.join(PROFILES)}")
    unknown = set(overrides or {}) - set(KINDS)
    if unknown:
        raise BackendError(f"unknown evaluator kind(s) {', '.join(sorted(unknown))}; expected {', '.join(KINDS)}")
    return {**PROFILES[profile], **{k: v for k, v in (overrides or {}).items() if v}}


def offline_only(specs: dict[str, str]) -> list[str]:
    """The kinds whose spec is the offline profile's and no real profile's (shipped dev models, or off)."""
    real = [PROFILES[name] for name in PROFILES if name != "offline"]
    return [k for k in KINDS if specs.get(k) == PROFILES["offline"][k] and all(p[k] != specs[k] for p in real)]


def load_evaluators(specs: Optional[dict[str, str]] = None, *, device: str = "auto", warmup: bool = True) -> Evaluators:
    """`specs`: kind -> spec on top of the offline profile (pass `resolve_specs(...)` for another)."""
    chosen = resolve_specs(DEFAULT_PROFILE, specs)
    from audionet.lib.core.devices import resolve_device  # the one device rule for miner, validator and bench

    device = resolve_device(device, flag="--eval.device")
    from audionet.models.eval.vad import SileroVad

    # By-id models first: a missing one fails before the shipped ones spend time loading.
    clap, speaker = load_clap(chosen["clap"], device), load_speaker(chosen["speaker"], device)
    aesthetics, mos = load_aesthetics(chosen["aesthetics"], device), load_mos(chosen["mos"], device)
    evaluators = Evaluators(
        asr=load_asr(chosen["asr"], device),
        mos=mos,
        speaker=speaker,
        clap=clap,
        aesthetics=aesthetics,
        vad=SileroVad(),
        music_quality=SignalMusicQuality(),
        device=device,
    )
    if warmup:
        for evaluator in evaluators.all():
            evaluator.warmup()
    return evaluators


def add_eval_flags(parser, *, profile: bool = True, device_default: str = "auto") -> None:
    """--eval.profile, --eval.<kind> and --eval.device, shared by the validator, audionet-score,
    audionet-bench and the evaluation-cost study so all of them judge with the same models (`profile`
    False: a tool that chooses profiles itself takes only the per-kind overrides)."""
    from audionet.lib.core.config import flag

    group = parser.add_argument_group("evaluation models")
    if profile:
        flag(
            group,
            "eval.profile",
            default="auto",
            choices=["auto", *PROFILES],
            help="auto: standard on a real network, offline on an offline chain and for local tools",
        )
    for kind in KINDS:
        flag(
            group,
            f"eval.{kind}",
            default=None,
            help=f"override the profile's {kind} model (offline: {PROFILES['offline'][kind]}; "
            f"standard: {PROFILES['standard'][kind]})",
        )
    flag(group, "eval.device", default=device_default, help="auto | cpu | cuda | cuda:N")


def chosen_profile(args, real_network: bool = False) -> str:
    return args.eval_profile if args.eval_profile != "auto" else ("standard" if real_network else DEFAULT_PROFILE)


def overrides_from_args(args) -> dict[str, str]:
    """--eval.<kind> as kind -> spec (None where not given)."""
    return {kind: getattr(args, f"eval_{kind}") for kind in KINDS}


def specs_from_args(args, real_network: bool = False) -> dict[str, str]:
    """The resolved specs: the chosen profile with every --eval.<kind> override on top."""
    return resolve_specs(chosen_profile(args, real_network), overrides_from_args(args))
