"""What the speech-LM families share (CSM, VibeVoice, Pocket TTS, Gradium Phonon): a reference clip cropped and
resampled to the model's rate (voice cloners), the request's text with no reference (synthesizers), a frame budget from the text's length in 2-second buckets (a model with random weights never stops
by itself, a trained one stops earlier), requests of one bucket run as one batch where the family allows it
(`max_batch`), and the answer clipped to the wire's range.

A family implements `_run_batch(frames, items)`: `items` are (text, reference samples at `sample_rate`,
reference transcript, seed) tuples (a synthesizer's reference is empty); it returns one float32 waveform per item. One sampling stream per batch,
seeded by its first request: a lone request is reproducible by its seed, a batched one by the batch's make-up.
"""

from __future__ import annotations

import math
import threading
from abc import abstractmethod
from typing import Any

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import Backend, SpeechSynthesizer, VoiceCloner
from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.hf.loading import from_pretrained, place, resolve_dtype

CHARS_PER_SECOND = 12.0  # speaking-rate guess that bounds the frames generated
BUCKET_SECONDS = 2.0
MAX_SECONDS = 30.0
MAX_REFERENCE_SECONDS = 15.0
Item = tuple[str, np.ndarray, str, int]  # text, reference samples, reference transcript, seed
NO_REFERENCE = np.zeros(0, np.float32)


class SpeechLm(Backend):
    max_seconds = MAX_SECONDS  # benchmarks of random weights (which never stop by themselves) lower it
    max_batch = 1  # a family that batches requests of different references raises it
    sample_rate: int
    frame_rate: float

    def _load(
        self, name: str, device: str, dtype: str, batch_window_s: float | None, model_class: Any, attention: Any
    ) -> None:
        """The processor and `model_class` of `name` (by HF id or folder) on `device`, with the batcher."""
        from transformers import AutoProcessor

        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        # Batching waits a little for company: worth it on a GPU, pure latency on 2 CPU cores.
        window = batch_window_s if batch_window_s is not None else (0.03 if device.startswith("cuda") else 0.0)
        self.batcher = LengthBucketBatcher(self._locked_batch, window_s=window, max_batch=self.max_batch)
        self._lock = threading.Lock()  # torch's global RNG: one seeded batch at a time
        self.processor = from_pretrained(AutoProcessor, name)
        if self.max_batch > 1:
            self.processor.tokenizer.padding_side = "left"  # a batch continues every row from its last token
        model = from_pretrained(model_class, name, attn_implementation=attention, dtype=self.dtype)
        self.model = place(model, device, self.dtype)

    def frames_for(self, text: str) -> int:
        seconds = min(self.max_seconds, 1.0 + len(text) / CHARS_PER_SECOND)
        return math.ceil(math.ceil(seconds / BUCKET_SECONDS) * BUCKET_SECONDS * self.frame_rate)

    def _speak(self, text: str, ref: np.ndarray, reference_text: str, seed: int) -> Audio:
        if not text.strip():
            raise WireError("text is empty")
        text, reference_text = " ".join(text.split()), " ".join(reference_text.split())
        samples = self.batcher.submit(self.frames_for(text), (text, ref, reference_text, seed))
        return answer(samples[: int(self.max_seconds * self.sample_rate)], self.sample_rate)

    def _locked_batch(self, frames, items: list[Item]) -> list[np.ndarray]:
        from audionet.models.hf.loading import seed_everything

        with self._lock:
            seed_everything(items[0][3])
            clips = self._run_batch(int(frames), items)
        if len(clips) != len(items):
            raise BackendError(f"{self.model_id} returned {len(clips)} clips for {len(items)} requests")
        return clips

    @abstractmethod
    def _run_batch(self, frames: int, items: list[Item]) -> list[np.ndarray]:
        """One float32 mono waveform at `sample_rate` per item, at most `frames` codec frames long."""


class SpeechLmCloner(SpeechLm, VoiceCloner):
    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        clip = reference.samples[: int(MAX_REFERENCE_SECONDS * reference.sample_rate)]
        ref = resample(Audio(clip, reference.sample_rate), self.sample_rate).samples.astype(np.float32)
        return self._speak(text, ref, reference_text, seed)

    def warmup(self) -> None:
        warm_up_clone(self)


class SpeechLmSynthesizer(SpeechLm, SpeechSynthesizer):
    """Text to speech in the checkpoint's own voice (one voice: `voices` stays empty)."""

    def synthesize(self, text: str, *, voice: str | None = None, seed: int = 0) -> Audio:
        if voice not in (None, "default"):
            raise WireError(f"{self.model_id} has one voice; omit voice or send 'default'")
        return self._speak(text, NO_REFERENCE, "", seed)


def waveforms(audio) -> list[np.ndarray]:
    """A model's list (or batch tensor) of waveforms -> float32 mono arrays (a missing one is empty)."""
    return [
        np.zeros(0, np.float32) if a is None else np.asarray(a.float().cpu().numpy(), np.float32).reshape(-1)
        for a in audio
    ]


def answer(samples, sample_rate: int) -> Audio:
    """A model's waveform as the wire's answer: mono, NaN-free, clipped to [-1, 1]; a one-line error when empty."""
    samples = np.nan_to_num(np.asarray(samples, np.float32).reshape(-1))
    if samples.size == 0:
        raise WireError("the model produced no audio for this text")
    return Audio(np.clip(samples, -1.0, 1.0), sample_rate)


def warm_up_clone(cloner) -> None:
    """One clone of a second of a 180 Hz tone at the cloner's own rate: its warm-up."""
    tone = np.sin(2 * np.pi * 180 * np.arange(cloner.sample_rate) / cloner.sample_rate).astype(np.float32)
    cloner.clone("Warm up.", Audio(0.3 * tone, cloner.sample_rate), "Warm up.", seed=0)
