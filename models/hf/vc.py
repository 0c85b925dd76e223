"""Zero-shot voice clone with Dia (nari-labs/Dia-1.6B-0626 or a local path) via transformers.

Why Dia rather than CSM-1B: both clone from a reference clip plus its
transcript, but Dia's processor takes the reference audio directly as an
audio prompt (DAC-encoded, delay pattern applied) and its tokenizer is
byte-level, so nothing but the model directory is needed; CSM needs a chat
template, a Llama-3 tokenizer and Mimi, which makes offline testing brittle.
The prompt is "[S1] <reference transcript> [S1] <text>" with the reference
audio as the decoder prefix; the generated continuation (after the prompt) is
the answer. Classifier-free guidance and sampling use Dia's generation config.
"""

from __future__ import annotations

import math
import threading

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import WireError
from audionet.models.base import VoiceCloner
from audionet.models.hf.loading import from_pretrained, place, resolve_dtype, seed_everything
from audionet.models.hf.speech_lm import answer, warm_up_clone

CHARS_PER_SECOND = 12.0  # speaking-rate guess that bounds the steps generated
MAX_SECONDS = 30.0
MAX_REFERENCE_SECONDS = 15.0


class DiaVoiceCloner(VoiceCloner):
    max_seconds = MAX_SECONDS  # benchmarks of random weights (which never stop by themselves) lower it

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from transformers import AutoProcessor, DiaForConditionalGeneration

        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        self.processor = from_pretrained(AutoProcessor, name)
        self.model = place(from_pretrained(DiaForConditionalGeneration, name), device, self.dtype)
        self.sample_rate = int(self.processor.feature_extractor.sampling_rate)
        self.frame_rate = self.sample_rate / self.processor.feature_extractor.hop_length
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time

    def steps_for(self, text: str) -> int:
        seconds = min(self.max_seconds, 1.0 + len(text) / CHARS_PER_SECOND)
        return math.ceil(seconds * self.frame_rate)

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        import torch

        if not text.strip():
            raise WireError("text is empty")
        ref = resample(
            Audio(reference.samples[: int(MAX_REFERENCE_SECONDS * reference.sample_rate)], reference.sample_rate),
            self.sample_rate,
        )
        prompt = f"[S1] {' '.join(reference_text.split())} [S1] {' '.join(text.split())}"
        with self._lock, torch.inference_mode():
            seed_everything(seed)
            with self.stage("audio_codec"):  # reference -> DAC codes
                inputs = self.processor(text=[prompt], audio=[ref.samples], padding=True, return_tensors="pt")
            inputs = inputs.to(self.device)
            prompt_len = self.processor.get_audio_prompt_len(inputs["decoder_attention_mask"])
            with self.stage("decoder"):
                codes = self.model.generate(**inputs, max_new_tokens=self.steps_for(text))
            with self.stage("audio_codec"):
                waves = self.processor.batch_decode(codes, audio_prompt_len=prompt_len)
        return answer(waves[0].float().cpu().numpy() if hasattr(waves[0], "cpu") else waves[0], self.sample_rate)

    def warmup(self) -> None:
        warm_up_clone(self)
