"""Music generation: render about N seconds of music a text describes.

Judged on text adherence (CLAP, when loaded; a stated tempo is checked offline),
quality (signal statistics) and length; speech sent as music is penalised.
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np
from pydantic import Field, field_validator

from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.core.protocol import ServiceRequest, Text, printable
from audionet.lib.prompts import make_music_prompt, make_seed
from audionet.lib.scoring.declaration import Ceiling, Judging, Part, Penalty, Range
from audionet.lib.scoring.jobs import Expect
from audionet.lib.services.base import Prompt, Service
from audionet.models.base import MusicGenerator

MIN_SECONDS, MAX_SECONDS = 1.0, 30.0
# what a validator asks for each round; a GPU miner's first warm-up is as long as the top (models/base.py)
DRAW_SECONDS = (4.0, MusicGenerator.LONGEST_DRAWN_S)
LENGTH_TOLERANCE = (0.1, 0.5)  # relative, absolute seconds: whichever is larger
# `--music.model preset`: the family each preset picks (and the family's step count for that preset comes with
# it, models/hf/diffusion.py). fast: ACE-Step 1.5 XL turbo, 8 steps, guidance distilled; balanced: Stable Audio
# Open 1.0, 50 steps, guidance 7; quality: ACE-Step 1.5 XL base, 32 steps, guidance 7.
PRESET_MODELS = {
    "fast": "hf:ACE-Step/acestep-v15-xl-turbo-diffusers",
    "balanced": "hf:stabilityai/stable-audio-open-1.0",
    "quality": "hf:ACE-Step/acestep-v15-xl-base-diffusers",
}
PRESET_SPEC = "preset"


class MusicRequest(ServiceRequest):
    service: Literal["music"] = "music"
    prompt: Text
    seconds: float = Field(strict=True, ge=MIN_SECONDS, le=MAX_SECONDS, allow_inf_nan=False)

    _prompt = field_validator("prompt")(printable)


class MusicGeneration(Service):
    name = "music"
    title = "Music Generation"
    request_model = MusicRequest
    backend_interface = MusicGenerator
    default_backend = "baseline:synth"
    offline_backend = "baseline:synth"  # MusicGen weights do not ship on PyPI
    timeout_s = 40.0
    max_seconds = MAX_SECONDS
    inputs = frozenset({"seconds"})
    seconds_range = (MIN_SECONDS, MAX_SECONDS)
    text_help = "the music prompt"
    # Learned judges where loaded: CLAP and Audiobox Aesthetics (real networks); offline, the onsets and the
    # key in the signal itself, musicnn's tags against the description's words, the stated tempo and key,
    # and the signal statistics. The penalties take what earns nothing on its own: audio that is not music
    # (YAMNet), a clip at the edge of the length tolerance keeps 80%; speech sent as music, a snippet padded with
    # silence, a looped snippet. Ranges from the labelled neural tracks and the cheats (docs/scoring.md#music).
    AESTHETICS = Range(3.0, 8.0)  # Audiobox axes (1..10): noise and speech-as-music sit low, produced music 6-8
    # Musical content, from the signal (the transcriber's notes are what a faint perturbation buys, issue 46):
    # onsets per second, where several keys rise together, a chord one onset (the 28 labelled neural tracks
    # 3.75-5.75; the synth 1.0-5.0), and how clearly the amplitude's pitch classes fit one key (neural
    # 0.64-0.94, median 0.81; the synth 0.57-0.96).
    MUSICALITY = {"onsets_per_s": Range(2.0, 3.5), "key_clarity": Range(0.5, 0.75)}
    # The description's words against the tags (contrast: own prompts ~0.57, contradicting ~0.43) and its key
    # against the pitch classes (own 0.25-0.92, median 0.68; a key six fifths away at most -0.14).
    PROMPT_FIT = {"tag_adherence": Range(0.40, 0.65), "key_fit": Range(0.0, 0.6)}
    # CLAP and Audiobox are public networks a perturbation drives to their top, and nothing floors them (issue
    # 46): each is paid at most what its floored counterpart says plus this slack, text fit under the prompt
    # fit, aesthetics under the musicality. Owning both (from half their range) lifts the synth by 0.047 on the
    # 28 own prompts, 0.153 uncapped; with both at their top the neural tracks keep 96.6 % (`audionet-bench judges`).
    LEARNED_SLACK = 0.15
    judging = Judging(
        "music",
        gates=("missing", "length", "silent", "clipped", "duplicate"),
        # music_floor: what YAMNet, musicnn and the content's measures hear is the answer under a noise floor, so
        # a faint perturbation cannot buy them (models/eval/music_floor.py; docs/scoring.md#judges-that-cannot-be-
        # bought). basic-pitch's notes are not read: a faint perturbation moves what it transcribes (issue 46).
        analyses=(
            "music_signal",
            "duration",
            "music_floor",
            "content",
            "sounds",
            "tags",
            "clap",
            "aesthetics",
            "speech_likeness",
        ),
        parts=(
            # CLAP cosine: unrelated text/audio pairs sit near 0, good matches 0.3-0.5.
            Part("adherence", 0.25, {"clap_cosine": Range(0.05, 0.45)}, ceiling=Ceiling(PROMPT_FIT, LEARNED_SLACK)),
            # Production quality, content enjoyment and usefulness (complexity is not better when higher).
            Part(
                "aesthetics",
                0.25,
                {"aes_pq": AESTHETICS, "aes_ce": AESTHETICS, "aes_cu": AESTHETICS},
                ceiling=Ceiling(MUSICALITY, LEARNED_SLACK),
            ),
            Part("musicality", 0.25, MUSICALITY),
            Part("prompt_fit", 0.15, PROMPT_FIT),
            # Relative tempo error against a stated bpm: 6% off scores 1, 25% off 0.
            Part("tempo_match", 0.1, {"tempo_error": Range(0.25, 0.06)}),
            Part("quality", 0.1, {"quality": Range(0.0, 1.0)}),  # the signal statistics' own 0..1
        ),
        penalties=(
            # YAMNet's AudioSet "Music" probability: neural tracks 0.95, the synth 0.36-0.99, a held chord with
            # a click 0.19, speech and noise 0.
            Penalty("not_music", "music_probability", Range(0.9, 0.3)),
            Penalty("duration", "duration_error", Range(0.0, 1.0), share=0.2),
            Penalty("speech", "speech_likeness", Range(0.3, 0.8)),
            # Share of non-silent frames: a 30% snippet padded with silence 0.3; the synth at its sparsest 0.65.
            Penalty("continuity", "active", Range(0.6, 0.35)),
            # Share of sounding frames recurring exactly at one lag: a looped snippet 1.0; the synth's median 0.16, its
            # sparsest drum patterns (loops of a bar, sample for sample) up to 0.99; neural tracks 0.03.
            Penalty("loop", "repetition", Range(0.8, 0.98)),
        ),
    )
    metrics = (
        ("adherence", "Text adherence (CLAP)"),
        ("tempo_match", "Tempo match (stated bpm)"),
        ("aesthetics", "Aesthetics (Audiobox)"),
        ("quality", "Quality (signal)"),
    )

    def load_backend(self, spec: str, *, preset: Optional[str] = None, **kwargs):
        """`preset` as a spec: the family of the preset (PRESET_MODELS) at that preset's step count."""
        if spec == PRESET_SPEC:
            chosen = preset or "balanced"
            if chosen not in PRESET_MODELS:
                raise BackendError(f"unknown music preset {chosen!r}; use {', '.join(PRESET_MODELS)}")
            spec = PRESET_MODELS[chosen]
        return super().load_backend(spec, preset=preset, **kwargs)

    def generate(self, backend: MusicGenerator, request: MusicRequest):
        return backend.generate(request.prompt, request.seconds, seed=request.seed)

    def build(self, prompt: Prompt) -> MusicRequest:
        if prompt.seconds is None:
            raise WireError("a music request needs a length in seconds")
        return MusicRequest(prompt=prompt.text, seconds=prompt.seconds, seed=prompt.seed)

    def draw(self, rng: np.random.Generator, sources=None, *, seconds: Optional[float] = None) -> MusicRequest:
        seed = make_seed(rng)
        text = make_music_prompt(rng)
        seconds = round(float(rng.uniform(*DRAW_SECONDS)), 1) if seconds is None else round(seconds, 2)
        return self.request(Prompt(text, seed=seed, seconds=seconds))

    def expected_seconds(self, request: MusicRequest) -> tuple[float, float]:
        relative, absolute = LENGTH_TOLERANCE
        slack = max(relative * request.seconds, absolute)
        return request.seconds - slack, request.seconds + slack

    def expect(self, request: MusicRequest) -> Expect:
        return Expect(self.expected_seconds(request), description=request.prompt, target_seconds=request.seconds)
