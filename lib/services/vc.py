"""Voice clone: speak a text in the voice of a reference clip the request carries.

Judged on speaker similarity and pitch match to the reference, intelligibility
and naturalness; an answer that replays the reference is gated. The references
come from `--vc.references DIR` (recordings) or are spoken fresh each round by
`--vc.reference_tts` voices (lib.prompts.references).
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Annotated, Literal, Optional

import numpy as np
from pydantic import PrivateAttr, StringConstraints, field_validator

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.core.config import CommaList, Settings, setting
from audionet.lib.core.errors import ConfigError, WireError
from audionet.lib.core.protocol import (
    MAX_PLAIN_REQUEST_BYTES,
    MAX_REFERENCE_FLAC_BYTES,
    ServiceRequest,
    Text,
    decode_reference,
    printable,
)
from audionet.lib.prompts import corpus, make_seed, make_sentence
from audionet.lib.prompts.references import FileReferences, SynthesisedReferences
from audionet.lib.scoring.declaration import Judging, Part, Penalty, Range
from audionet.lib.scoring.jobs import Expect
from audionet.lib.services.base import Prompt, SpeechService
from audionet.lib.services.speech import (
    CONTENT,
    DEFAULT_CHARS_PER_SECOND,
    NATURALNESS_CEILING,
    SPEECH_GATES,
    chars_per_second,
    intelligibility,
    naturalness,
    segment_chars,
    text_of_length,
)
from audionet.models.base import SpeechSynthesizer, VoiceCloner
from audionet.models.factory import load_backend

MAX_VC_REQUEST_BYTES = MAX_PLAIN_REQUEST_BYTES + MAX_REFERENCE_FLAC_BYTES * 4 // 3 + 4  # base64 of the clip


class VCRequest(ServiceRequest):
    service: Literal["vc"] = "vc"
    text: Text
    reference_text: Text
    reference_flac_b64: Annotated[str, StringConstraints(min_length=8, max_length=MAX_VC_REQUEST_BYTES)]

    _text = field_validator("text", "reference_text")(printable)
    _reference: Optional[Audio] = PrivateAttr(default=None)

    def reference(self) -> Audio:
        """The reference clip, decoded and checked like any audio from the wire
        (once: parsing validates it and the backend reuses it)."""
        if self._reference is None:
            self._reference = decode_reference(self.reference_flac_b64)
        return self._reference


@dataclass(frozen=True)
class ReferenceSettings(Settings):
    """voice-clone references"""

    directory: Optional[str] = setting(
        "vc.references",
        None,
        help="directory of reference clips (name.wav|flac|ogg + name.txt transcript); default on a real "
        "network: the clips `audionet-references fetch` keeps; offline: fresh --vc.reference_tts speech",
    )
    synthesised: bool = setting(
        "vc.synthesised",
        False,
        action="store_true",
        help="on a real network, speak fresh references with --vc.reference_tts instead of recordings",
    )
    reference_tts: tuple[str, ...] = setting(
        "vc.reference_tts",
        ("baseline:espeak", "kokoro:"),
        type=CommaList(what="TTS spec"),
        help="comma-separated TTS specs (any --tts.model spec) whose voices speak fresh reference sentences",
    )


class VoiceClone(SpeechService):
    name = "vc"
    title = "Voice Clone"
    request_model = VCRequest
    backend_interface = VoiceCloner
    default_backend = "baseline:world"
    offline_backend = "kokoro-clone:"
    timeout_s = 30.0
    max_seconds = 30.0
    max_request_bytes = MAX_VC_REQUEST_BYTES
    inputs = frozenset({"reference"})
    text_help = "the text to speak in the reference's voice"
    judging = Judging(
        "vc",
        gates=(*SPEECH_GATES, "replay"),
        analyses=("speaker", "pitch", "mos", "asr"),
        parts=(
            # Speaker-embedding cosine: other voices of the d-vector sit at 0.2-0.6, the same voice at 0.9+. A
            # speaker encoder is as buyable as a MOS predictor (+0.2 cosine for a perturbation 40 dB down), and
            # it was trained on natural speech: speech that does not sound natural to the naturalness student
            # gets no credit for sounding like the reference either (the naturalness ceiling caps both).
            Part("similarity", 0.4, {"speaker_cosine": Range(0.2, 0.9)}, ceiling=NATURALNESS_CEILING),
            intelligibility(0.25),
            # Pitch: the median F0 (0 at 6 semitones off) and the pitch range (0 at twice or half the spread).
            Part(
                "f0_match",
                0.15,
                {"pitch_offset_st": Range(6.0, 0.0), "pitch_spread_log2": Range(1.0, 0.0)},
                mix={"pitch_offset_st": 0.7, "pitch_spread_log2": 0.3},
            ),
            naturalness(0.2),
        ),
        # Another voice: one speaker's median pitch moves about a semitone between read sentences; a clone more
        # than 2 semitones from its reference's is not that voice (plain TTS that ignores the reference kept
        # 84 % of an honest clone's score without this, above the incentive curve's floor).
        penalties=(CONTENT, Penalty("other_voice", "pitch_offset_st", Range(2.0, 6.0))),
    )
    metrics = (
        ("speaker_cosine", "Speaker similarity (cosine)"),
        ("f0_rmse_hz", "Pitch RMSE (Hz)"),
        ("f0_offset_st", "Pitch offset (semitones)"),
        ("wer", "WER"),
        ("mos", "MOS (first predictor, 1-5)"),
    )

    def check(self, request: VCRequest) -> None:
        super().check(request)
        request.reference()  # reject a bad clip before it is queued

    def generate(self, backend: VoiceCloner, request: VCRequest):
        return backend.clone(request.text, request.reference(), request.reference_text, seed=request.seed)

    def build(self, prompt: Prompt) -> VCRequest:
        if prompt.reference is None:
            raise WireError("a voice-clone request needs a reference clip and its transcript")
        clip = base64.b64encode(encode_flac(prompt.reference.audio)).decode()
        return VCRequest(
            text=prompt.text, reference_text=prompt.reference.transcript, reference_flac_b64=clip, seed=prompt.seed
        )

    def add_flags(self, parser) -> None:
        ReferenceSettings.add_flags(parser)

    def source_settings(self, args) -> ReferenceSettings:
        return ReferenceSettings.from_flags(args)

    def open_sources(self, settings: Optional[ReferenceSettings] = None, *, real_network: bool = False):
        """--vc.references; on a real network, the fetched human recordings by default (synthesised
        voices favour cloners built on the same engines, so only with --vc.synthesised); offline,
        fresh sentences spoken by --vc.reference_tts voices (on CPU)."""
        settings = settings or ReferenceSettings()
        if settings.directory:
            return FileReferences(settings.directory)
        if real_network and not settings.synthesised:
            if os.path.isdir(corpus.DEFAULT_DIR):
                return FileReferences(corpus.DEFAULT_DIR)
            raise ConfigError(
                f"no reference recordings at {corpus.DEFAULT_DIR}: run `audionet-references fetch` (LibriSpeech "
                "test-clean, 346 MB download) or pass --vc.references DIR; synthesised references favour cloners "
                "built on the same engines (--vc.synthesised uses them anyway)"
            )
        speakers = []
        for spec in settings.reference_tts:
            speaker = load_backend(spec, SpeechSynthesizer, device="cpu", label="reference TTS")
            speakers.append((speaker, list(speaker.voices) or [None]))
        return SynthesisedReferences(speakers)

    def draw(self, rng: np.random.Generator, sources, *, seconds: Optional[float] = None) -> VCRequest:
        seed = make_seed(rng)
        reference = sources.draw(rng)
        if seconds is None:
            text = make_sentence(rng)
        else:
            text = text_of_length(rng, round(seconds * chars_per_second(reference.transcript, reference.audio.seconds)))
        return self.request(Prompt(text, seed=seed, reference=reference))

    def workload(self, rng, sources, target_seconds, calibration=None) -> list[VCRequest]:
        """One reference per run, drawn as the validator draws one; text at the reference's pace."""
        reference = sources.draw(rng)
        pace = chars_per_second(reference.transcript, reference.audio.seconds) or DEFAULT_CHARS_PER_SECOND
        return [
            self.request(Prompt(text_of_length(rng, chars), seed=make_seed(rng), reference=reference))
            for chars in segment_chars(target_seconds, pace, self.max_seconds)
        ]

    def expect(self, request: VCRequest) -> Expect:
        reference = request.reference()
        return Expect(self.expected_seconds(request), words=request.text, reference=reference, carried=(reference,))
