"""Voice clone by context with CSM (sesame/csm-1b or a local path) via transformers.

CSM speaks the next turn of a conversation in the voice its context sets: the context is the reference
clip as speaker 0's turn (its transcript, then its audio as Mimi codes), and the request's text is speaker
0's next turn, with no audio. Each turn is written as the CSM processor expects it: `[speaker]text` between
the tokenizer's begin- and end-of-text tokens, an audio turn as `<|AUDIO|><|audio_eos|>` that the processor
expands to one token per codec frame. The backbone predicts the first codebook of each frame and the depth
decoder the rest; Mimi decodes at 24 kHz. One request at a time: transformers 5.23's CSM fails on a batch
whose items' audio contexts differ (its merge of audio codes into the left-padded batch miscounts frames), and
every request carries its own reference. On CUDA: bf16 (fp16 before compute capability 8.0), SDPA.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import VoiceCloner
from audionet.models.hf.loading import from_pretrained, place, resolve_dtype, seed_everything

CHARS_PER_SECOND = 12.0  # speaking-rate guess that bounds the frames generated
BUCKET_SECONDS = 2.0
MAX_SECONDS = 30.0
MAX_REFERENCE_SECONDS = 15.0
SPEAKER = 0


class CsmVoiceCloner(VoiceCloner):
    max_seconds = MAX_SECONDS  # benchmarks of random weights (which never stop by themselves) lower it

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from transformers import AutoProcessor, CsmForConditionalGeneration

        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        self.processor = from_pretrained(AutoProcessor, name)
        model = from_pretrained(CsmForConditionalGeneration, name, attn_implementation="sdpa", dtype=self.dtype)
        self.model = place(model, device, self.dtype)
        codec = self.model.config.codec_config
        self.sample_rate = int(codec.sampling_rate)
        self.frame_rate = float(codec.frame_rate)
        tokenizer = self.processor.tokenizer
        self.begin, self.end = tokenizer.bos_token or "", tokenizer.eos_token or ""
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time

    def turn(self, text: str, audio: bool) -> str:
        spoken = f"{self.begin}[{SPEAKER}]{' '.join(text.split())}{self.end}"
        return spoken + (f"{self.processor.audio_token}{self.processor.audio_eos_token}" if audio else "")

    def frames_for(self, text: str) -> int:
        seconds = min(self.max_seconds, 1.0 + len(text) / CHARS_PER_SECOND)
        return math.ceil(math.ceil(seconds / BUCKET_SECONDS) * BUCKET_SECONDS * self.frame_rate)

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        if not text.strip():
            raise WireError("text is empty")
        clip = reference.samples[: int(MAX_REFERENCE_SECONDS * reference.sample_rate)]
        ref = resample(Audio(clip, reference.sample_rate), self.sample_rate).samples.astype(np.float32)
        prompt = self.turn(reference_text, audio=True) + self.turn(text, audio=False)
        with self._lock:
            (samples,) = self._run_batch(self.frames_for(text), [(prompt, ref, seed)])
        samples = np.nan_to_num(samples[: int(self.max_seconds * self.sample_rate)])
        if samples.size == 0:
            raise WireError("the model produced no audio for this text")
        return Audio(np.clip(samples, -1.0, 1.0), self.sample_rate)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        seed_everything(items[0][2])
        with torch.inference_mode():
            with self.stage("audio_codec"):  # the reference -> Mimi codes happens inside the processor call
                inputs = self.processor(
                    text=[prompt for prompt, _, _ in items],
                    audio=[ref for _, ref, _ in items],
                    add_special_tokens=False,
                    return_tensors="pt",
                )
            inputs = inputs.to(self.device)
            if "input_values" in inputs:
                inputs["input_values"] = inputs["input_values"].to(self.dtype)
            with self.stage("decoder"):
                audio = self.model.generate(**inputs, output_audio=True, max_new_tokens=frames, do_sample=True)
        clips = [np.asarray(a.float().cpu().numpy(), np.float32).reshape(-1) for a in audio]
        if len(clips) != len(items):
            raise BackendError(f"{self.model_id} returned {len(clips)} clips for {len(items)} requests")
        return clips

    def warmup(self) -> None:
        tone = np.sin(2 * np.pi * 180 * np.arange(self.sample_rate) / self.sample_rate).astype(np.float32)
        self.clone("Warm up.", Audio(0.3 * tone, self.sample_rate), "Warm up.", seed=0)
