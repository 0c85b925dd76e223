"""Music generation: render about N seconds of music a text describes.

Judged on text adherence (CLAP, when loaded; a stated tempo is checked offline),
quality (signal statistics) and length; speech sent as music is penalised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Optional

import numpy as np
from pydantic import Field, field_validator

from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.core.protocol import ServiceRequest, Text, printable
from audionet.lib.prompts import make_music_prompt, make_seed
from audionet.lib.services.base import Prompt, Service
from audionet.models.base import MusicGenerator

MIN_SECONDS, MAX_SECONDS = 1.0, 30.0
DRAW_SECONDS = (4.0, 10.0)  # what a validator asks for each round
LENGTH_TOLERANCE = (0.1, 0.5)  # relative, absolute seconds: whichever is larger
DURATION_SHARE = 0.2  # a clip at the edge of the length tolerance keeps 80%
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
    gates = ("missing", "length", "silent", "clipped", "duplicate")
    # Learned judges first where loaded (CLAP, Audiobox Aesthetics); offline, the signal statistics and
    # the stated tempo keep their old 2.5:1 ratio.
    weights = {"adherence": 0.35, "aesthetics": 0.3, "quality": 0.25, "tempo_match": 0.1}
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

    def evaluate(self, evaluators, clips, timed) -> None:
        from audionet.lib.scoring import rewards
        from audionet.lib.scoring.measures import music_signal, production_aesthetics, speech_likeness, text_adherence

        prompts = [clip.request.prompt for clip in clips]
        music_signal(evaluators, clips, prompts, timed)
        for clip in clips:
            low, high = self.expected_seconds(clip.request)
            clip.components["duration_match"] = rewards.duration_match(
                clip.audio.seconds, clip.request.seconds, (high - low) / 2
            )
        text_adherence(evaluators, clips, prompts, timed)
        production_aesthetics(evaluators, clips, timed)
        speech_likeness(evaluators, clips, timed)

    def combine(self, components: Mapping[str, float]) -> float:
        """The weighted mean, scaled by multipliers that earn nothing on their own: the duration
        match, the speech penalty, and penalties for silence (a snippet padded to length) and for
        a looped snippet."""
        from audionet.lib.scoring import rewards

        score = super().combine(components)
        score *= (1.0 - DURATION_SHARE) + DURATION_SHARE * components.get("duration_match", 0.0)
        score *= 1.0 - components.get("speech_penalty", 0.0)
        score *= rewards.ramp(components.get("active", 1.0), *rewards.CONTINUITY_RANGE)
        return score * (1.0 - rewards.ramp(components.get("repetition", 0.0), *rewards.REPETITION_RANGE))
