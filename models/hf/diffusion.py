"""Music by latent diffusion through diffusers: Stable Audio Open 1.0 and ACE-Step 1.5 (HF id or local dir).

`hf:<id or dir>` routes here on the `_class_name` of a diffusers `model_index.json` (models/factory.py), as it
routes transformers models on `model_type`. A family is a subclass that says how its pipeline is called:
steps and guidance per preset, the longest clip its latent holds, and the keyword names of length and seed.
Every request has its own seeded torch.Generator, so a request is reproducible by its seed even inside a
batch; requests of one length bucket run as one batch. The pipelines return stereo (batch, 2, samples);
the wire carries mono float32, so channels are averaged, and the sample rate is the VAE's, read from the
model. On CUDA the pipeline runs in bf16 (fp16 before compute capability 8.0) with diffusers' SDPA attention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import MusicGenerator
from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.hf.loading import from_pretrained, resolve_dtype

BUCKET_SECONDS = 1.0  # requests within the same second of length share a batch
MAX_SECONDS = 30.0  # the protocol's longest music request


@dataclass(frozen=True)
class Sampling:
    steps: int
    guidance: float


def fold_to_mono(audio: np.ndarray) -> np.ndarray:
    """(channels, samples) or (samples,) -> float32 mono, finite, within [-1, 1]."""
    audio = np.asarray(audio, dtype=np.float32)
    mono = audio.mean(axis=0) if audio.ndim == 2 else audio.reshape(-1)
    return np.clip(np.nan_to_num(mono), -1.0, 1.0).astype(np.float32)


class DiffusionMusicGenerator(MusicGenerator):
    presets: tuple[str, ...] = ("fast", "balanced", "quality")
    sampling: ClassVar[dict[str, Sampling]]  # per preset

    def __init__(
        self,
        name: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        preset: str = "balanced",
        batch_window_s: float | None = None,
        max_batch: int = 4,
    ) -> None:
        import diffusers

        if preset not in self.sampling:
            raise BackendError(f"unknown music preset {preset!r}; use {', '.join(self.sampling)}")
        self.preset, self.settings = preset, self.sampling[preset]
        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        loader = getattr(diffusers, self.pipeline_class)
        self.pipe = from_pretrained(loader, name, dtype=self.dtype).to(device)
        self.pipe.set_progress_bar_config(disable=True)
        self.sample_rate = int(self.pipe.vae.config.sampling_rate)
        self.max_seconds = min(MAX_SECONDS, self.longest_seconds())
        window = batch_window_s if batch_window_s is not None else (0.03 if device.startswith("cuda") else 0.0)
        self.batcher = LengthBucketBatcher(self._run_batch, window_s=window, max_batch=max_batch)

    pipeline_class: ClassVar[str]

    def longest_seconds(self) -> float:
        """The longest clip the model makes (its latent's length)."""
        return MAX_SECONDS

    def call_kwargs(self, seconds: float, count: int) -> dict[str, Any]:
        """The family's keywords for a batch of `count` clips `seconds` long (besides prompt, generator, steps)."""
        raise NotImplementedError

    # -- generation -------------------------------------------------------------
    def bucket_for(self, seconds: float) -> float:
        return min(self.max_seconds, math.ceil(seconds / BUCKET_SECONDS - 1e-9) * BUCKET_SECONDS)

    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        if not prompt.strip():
            raise WireError("music prompt is empty")
        if not 0 < seconds <= self.max_seconds:
            raise WireError(f"music length must be in (0, {self.max_seconds:g}] s for {self.model_id}")
        samples = self.batcher.submit(self.bucket_for(seconds), (prompt, seed))
        wanted = round(seconds * self.sample_rate)
        samples = samples[:wanted]
        if samples.size < wanted:
            samples = np.pad(samples, (0, wanted - samples.size))
        return Audio(samples, self.sample_rate)

    def _run_batch(self, seconds: float, items) -> list[np.ndarray]:
        import torch

        generators = [torch.Generator(self.device).manual_seed(int(seed)) for _, seed in items]
        with self.stage("diffusion"), torch.inference_mode():
            audio = self.pipe(
                prompt=[prompt for prompt, _ in items],
                num_inference_steps=self.settings.steps,
                guidance_scale=self.settings.guidance,
                generator=generators,
                output_type="pt",
                **self.call_kwargs(seconds, len(items)),
            ).audios
        clips = [fold_to_mono(clip) for clip in audio.float().cpu().numpy()]
        if len(clips) != len(items):
            raise BackendError(f"{self.model_id} returned {len(clips)} clips for {len(items)} prompts")
        return clips


class StableAudioMusicGenerator(DiffusionMusicGenerator):
    """stabilityai/stable-audio-open-1.0 (44.1 kHz stereo, up to 47 s): a DiT over Oobleck VAE latents,
    conditioned on T5 text and on the clip's start and end seconds; the pipeline denoises its whole
    latent window and cuts the requested seconds out of the decoded audio. Steps and guidance: the model
    card's example uses 100 steps and guidance 7; fewer steps trade quality for time."""

    pipeline_class = "StableAudioPipeline"
    sampling = {"fast": Sampling(25, 7.0), "balanced": Sampling(50, 7.0), "quality": Sampling(100, 7.0)}

    def longest_seconds(self) -> float:
        config = self.pipe.transformer.config
        return config.sample_size * self.pipe.vae.hop_length / self.sample_rate

    def call_kwargs(self, seconds: float, count: int) -> dict[str, Any]:
        return {"audio_start_in_s": 0.0, "audio_end_in_s": seconds}


class AceStepMusicGenerator(DiffusionMusicGenerator):
    """ACE-Step 1.5 (48 kHz stereo, minutes long): a DiT over Oobleck latents at 25 frames a second,
    conditioned on a Qwen3 text encoding of the caption and the lyrics. The turbo checkpoints have guidance
    distilled into the weights and run 8 steps (the pipeline ignores guidance for them); base/SFT ones take
    guidance. A music request has no lyrics: it asks for an instrumental."""

    pipeline_class = "AceStepPipeline"
    sampling = {"fast": Sampling(8, 7.0), "balanced": Sampling(16, 7.0), "quality": Sampling(32, 7.0)}
    lyrics = "[Instrumental]"

    def call_kwargs(self, seconds: float, count: int) -> dict[str, Any]:
        return {"audio_duration": seconds, "lyrics": [self.lyrics] * count}

    turbo_sampling = Sampling(8, 1.0)  # guidance is in the weights, distilled for 8 steps

    def __init__(self, name: str, **kwargs) -> None:
        super().__init__(name, **kwargs)
        if self.pipe.is_turbo:
            self.settings = self.turbo_sampling
