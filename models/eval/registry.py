"""Evaluator spec strings -> loaded evaluators, for the validator and audionet-bench.

| kind    | default (offline)  | other specs                                      |
|---------|--------------------|--------------------------------------------------|
| asr     | whisper:tiny.en    | whisper:<CTranslate2 id or folder>, none          |
| mos     | dnsmos             | none                                              |
| speaker | dvector            | resemblyzer, wavlm:<HF id or folder>              |
| clap    | none               | clap:<HF id or folder> (e.g. laion/larger_clap_music) |

Specs come from flags, never from the wire. VAD (silero) and the music
signal statistics are always loaded: the gates depend on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from audionet.lib.errors import BackendError
from audionet.models.eval.base import MosPredictor, SpeakerEncoder, TextAudioScorer, Transcriber, VoiceActivityDetector
from audionet.models.eval.music_quality import SignalMusicQuality

DEFAULT_SPECS = {"asr": "whisper:tiny.en", "mos": "dnsmos", "speaker": "dvector", "clap": "none"}


@dataclass
class Evaluators:
    asr: Optional[Transcriber]
    mos: Optional[MosPredictor]
    speaker: SpeakerEncoder
    clap: Optional[TextAudioScorer]
    vad: VoiceActivityDetector
    music_quality: SignalMusicQuality
    device: str

    def describe(self) -> dict[str, str]:
        return {
            name: getattr(self, name).model_id if getattr(self, name) else "none"
            for name in ("asr", "mos", "speaker", "clap", "vad", "music_quality")
        }


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
        from audionet.models.eval.whisper_asr import WhisperTranscriber

        return WhisperTranscriber(rest or "tiny.en", device="cuda" if device.startswith("cuda") else "cpu")
    raise BackendError(f"unknown --eval.asr spec {spec!r}; use whisper:<model id or folder> or none")


def load_mos(spec: str, device: str) -> Optional[MosPredictor]:
    scheme, _ = _split("mos", spec)
    if scheme == "none":
        return None
    if scheme == "dnsmos":
        from audionet.models.eval.dnsmos import DnsMos

        return DnsMos(device="cuda" if device.startswith("cuda") else "cpu")
    if scheme == "utmos":
        raise BackendError("UTMOS weights do not ship on PyPI and no loader is wired; use --eval.mos dnsmos")
    raise BackendError(f"unknown --eval.mos spec {spec!r}; use dnsmos or none")


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


def load_evaluators(specs: dict[str, str] | None = None, *, device: str = "auto", warmup: bool = True) -> Evaluators:
    chosen = dict(DEFAULT_SPECS)
    unknown = set(specs or {}) - set(DEFAULT_SPECS)
    if unknown:
        raise BackendError(
            f"unknown evaluator kind(s) {', '.join(sorted(unknown))}; expected {', '.join(DEFAULT_SPECS)}"
        )
    chosen.update({k: v for k, v in (specs or {}).items() if v})
    from audionet.lib.gpu import resolve_device  # the one device rule for miner, validator and bench

    device = resolve_device(device, flag="--eval.device")
    from audionet.models.eval.vad import SileroVad

    # Optional by-id models first: a missing one fails before the shipped ones spend time loading.
    clap, speaker = load_clap(chosen["clap"], device), load_speaker(chosen["speaker"], device)
    evaluators = Evaluators(
        asr=load_asr(chosen["asr"], device),
        mos=load_mos(chosen["mos"], device),
        speaker=speaker,
        clap=clap,
        vad=SileroVad(),
        music_quality=SignalMusicQuality(),
        device=device,
    )
    if warmup:
        for name in ("asr", "mos", "speaker", "clap", "vad", "music_quality"):
            if getattr(evaluators, name) is not None:
                getattr(evaluators, name).warmup()
    return evaluators


def add_eval_flags(parser) -> None:
    """--eval.asr/--eval.mos/--eval.speaker/--eval.clap/--eval.device, shared by the validator
    and audionet-bench so both judge with the same models."""
    from audionet.lib.config import flag

    group = parser.add_argument_group("evaluation models")
    flag(
        group,
        "eval.asr",
        default=DEFAULT_SPECS["asr"],
        help="whisper:<id or folder> | none (default: the shipped tiny.en)",
    )
    flag(group, "eval.mos", default=DEFAULT_SPECS["mos"], help="dnsmos | none")
    flag(
        group, "eval.speaker", default=DEFAULT_SPECS["speaker"], help="dvector | resemblyzer | wavlm:<HF id or folder>"
    )
    flag(
        group,
        "eval.clap",
        default=DEFAULT_SPECS["clap"],
        help="clap:<HF id or folder> (e.g. laion/larger_clap_music) | none",
    )
    flag(group, "eval.device", default="auto", help="auto | cpu | cuda | cuda:N")


def specs_from_args(args) -> dict[str, str]:
    return {kind: getattr(args, f"eval_{kind}") for kind in DEFAULT_SPECS}
