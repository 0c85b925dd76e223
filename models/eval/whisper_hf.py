"""Whisper speech recognition through transformers (torch): the engine for Whisper on CUDA.

torch==2.13.0 from PyPI brings CUDA 13, which this engine uses as it is; CTranslate2 (the CPU engine,
whisper_asr.py) would need a CUDA 12 cuBLAS beside it (docs/gpu-hosts.md). Weights by HF id
(`openai/whisper-large-v3-turbo`) or a folder saved by `save_pretrained`; bf16 on a GPU of compute
capability 8.0+, else fp16, fp32 on the CPU; SDPA attention. A round's clips are one batch: each is
one 30 s log-mel window (our clips are at most 30 s), encoded together and greedily decoded together,
with the same decoding limits as the CTranslate2 engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.models.eval.base import Transcriber
from audionet.models.hf.loading import from_pretrained, resolve_dtype

SAMPLE_RATE = 16_000
MAX_NEW_TOKENS = 160  # 30 s of fast speech is about 120 tokens
NO_REPEAT_NGRAM = 3


class TransformersWhisper(Transcriber):
    def __init__(
        self,
        model: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        batch_size: int = 16,
        max_new_tokens: int = MAX_NEW_TOKENS,
        label: str = "",
    ):
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperProcessor

        self._torch, self._dtype = torch, resolve_dtype(dtype, device)
        self._processor = from_pretrained(WhisperProcessor, model)
        network = from_pretrained(WhisperForConditionalGeneration, model, dtype=self._dtype, attn_implementation="sdpa")
        self._model = network.to(device).eval()
        generation = self._model.generation_config
        # Multilingual checkpoints are told the language; English-only ones (and random stand-ins) have none.
        self._language = (
            {"language": "en", "task": "transcribe"} if getattr(generation, "is_multilingual", False) else {}
        )
        self.model_id, self.device, self.batch_size = f"whisper:{label or model}", device, batch_size
        self.max_new_tokens = max_new_tokens

    def transcribe(self, clips: Sequence[Audio]) -> list[str]:
        texts: list[str] = []
        for start in range(0, len(clips), self.batch_size):
            batch = [resample(clip, SAMPLE_RATE).samples for clip in clips[start : start + self.batch_size]]
            features = self._processor.feature_extractor(batch, sampling_rate=SAMPLE_RATE, return_tensors="pt")
            with self._torch.inference_mode():
                tokens = self._model.generate(
                    features["input_features"].to(self.device, self._dtype),
                    max_new_tokens=self.max_new_tokens,
                    no_repeat_ngram_size=NO_REPEAT_NGRAM,
                    num_beams=1,
                    do_sample=False,
                    **self._language,
                )
            texts.extend(text.strip() for text in self._processor.batch_decode(tokens, skip_special_tokens=True))
        return texts

    def warmup(self) -> None:
        self.transcribe([Audio(np.zeros(SAMPLE_RATE // 2, np.float32), SAMPLE_RATE)])
