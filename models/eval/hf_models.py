"""Evaluators that load through transformers by HF id or local folder.

* `ClapScorer` - text adherence for music: cosine of CLAP's text and audio
  embeddings (e.g. `laion/larger_clap_music`).
* `WavLMSpeakerEncoder` - WavLM x-vectors (`WavLMForXVector`, e.g.
  `microsoft/wavlm-base-plus-sv`).

Neither ships on PyPI; offline they load only from a local folder (or a
hub cache). A missing model is one line, never a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.models.eval.base import SpeakerEncoder, TextAudioScorer
from audionet.models.hf.loading import from_pretrained


def _torch_dtype(device: str, dtype: str | None):
    import torch

    if dtype:
        return getattr(torch, dtype)
    return torch.float16 if device == "cuda" else torch.float32


class ClapScorer(TextAudioScorer):
    def __init__(self, model: str, *, device: str = "cpu", dtype: str | None = None, batch_size: int = 8):
        import torch
        from transformers import ClapModel, ClapProcessor

        self._torch = torch
        self._processor = from_pretrained(ClapProcessor, model)
        self._dtype = _torch_dtype(device, dtype)
        self._model = from_pretrained(ClapModel, model, dtype=self._dtype).to(device).eval()
        self._rate = int(self._processor.feature_extractor.sampling_rate)
        self.model_id, self.device, self.batch_size = f"clap:{model}", device, batch_size

    def _centre(self, samples: np.ndarray) -> np.ndarray:
        """The middle `max_length_s` of a clip: CLAP would otherwise crop longer clips at
        random, and a validator's score must be reproducible."""
        limit = int(self._processor.feature_extractor.nb_max_samples)
        start = max(0, (len(samples) - limit) // 2)
        return samples[start : start + limit]

    def score(self, texts: Sequence[str], clips: Sequence[Audio]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(clips), self.batch_size):
            batch_texts = list(texts[start : start + self.batch_size])
            audios = [self._centre(resample(c, self._rate).samples) for c in clips[start : start + self.batch_size]]
            inputs = self._processor(  # a prompt longer than the text tower reads is cut there, not an error
                text=batch_texts,
                audio=audios,
                sampling_rate=self._rate,
                return_tensors="pt",
                padding=True,
                truncation=True,
            )
            inputs = {
                k: (v.to(self.device, self._dtype) if v.is_floating_point() else v.to(self.device))
                for k, v in inputs.items()
            }
            with self._torch.inference_mode():
                text = self._model.get_text_features(
                    input_ids=inputs["input_ids"], attention_mask=inputs.get("attention_mask")
                )
                audio = self._model.get_audio_features(
                    input_features=inputs["input_features"], is_longer=inputs.get("is_longer")
                )
            text = getattr(text, "pooler_output", text)
            audio = getattr(audio, "pooler_output", audio)
            cos = self._torch.nn.functional.cosine_similarity(text.float(), audio.float(), dim=-1)
            out.extend(float(v) for v in cos.cpu())
        return out

    def warmup(self) -> None:
        self.score(["warm up"], [Audio(np.zeros(self._rate, np.float32), self._rate)])


class WavLMSpeakerEncoder(SpeakerEncoder):
    SAMPLE_RATE = 16_000

    def __init__(self, model: str, *, device: str = "cpu", dtype: str | None = None, batch_size: int = 8):
        import torch
        from transformers import AutoFeatureExtractor, WavLMForXVector

        self._torch = torch
        self._extractor = from_pretrained(AutoFeatureExtractor, model)
        self._dtype = _torch_dtype(device, dtype)
        self._model = from_pretrained(WavLMForXVector, model, dtype=self._dtype).to(device).eval()
        self.model_id, self.device, self.batch_size = f"wavlm:{model}", device, batch_size

    def embed(self, clips: Sequence[Audio]) -> np.ndarray:
        vectors = []
        for start in range(0, len(clips), self.batch_size):
            audios = [resample(c, self.SAMPLE_RATE).samples for c in clips[start : start + self.batch_size]]
            inputs = self._extractor(
                audios, sampling_rate=self.SAMPLE_RATE, return_tensors="pt", padding=True, return_attention_mask=True
            )
            with self._torch.inference_mode():
                output = self._model(
                    input_values=inputs["input_values"].to(self.device, self._dtype),
                    attention_mask=inputs["attention_mask"].to(self.device),
                )
            emb = self._torch.nn.functional.normalize(output.embeddings.float(), dim=-1)
            vectors.append(emb.cpu().numpy())
        return np.concatenate(vectors).astype(np.float32) if vectors else np.zeros((0, 1), np.float32)

    def warmup(self) -> None:
        self.embed([Audio(np.zeros(self.SAMPLE_RATE, np.float32), self.SAMPLE_RATE)])
