"""OmniVoice (k2-fsa/OmniVoice, or a local path) through the omnivoice package, as voice clone and as text to speech:
one backend serves both slots.

OmniVoice is a masked-diffusion LM (a Qwen3 backbone with audio embeddings and heads over the 8 codebooks of Higgs
Audio v2's tokenizer, 25 frames a second at 24 kHz): it estimates the answer's length from the text (and the
reference's speaking rate), fills that many masked frames in `num_step` steps (32, the package's default) with
classifier-free guidance, and post-processes the audio (silence trimmed, faded, padded). A clone gives the reference
clip and its transcript; text to speech gives neither, and the model picks a voice (its "auto" mode; one voice name,
`default`). The package's model type is its own (`omnivoice`, not in transformers), which `hf:` reads from the
config.json. English (`en`). Requests of one length bucket run as one batch (the package's batched generate; one
sampling stream, seeded by its first request). On CUDA: bf16 (fp16 before compute capability 8.0); the audio tokenizer
stays fp32.
"""

from __future__ import annotations

import numpy as np

from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.hf.loading import from_pretrained, place, resolve_dtype
from audionet.models.hf.speech_lm import SpeechLmCloner, SpeechLmSynthesizer

LANGUAGE = "en"
MAX_BATCH = 4


class OmniVoiceSpeech(SpeechLmCloner, SpeechLmSynthesizer):
    max_batch = MAX_BATCH

    def __init__(
        self, name: str, *, device: str = "cpu", dtype: str = "auto", batch_window_s: float | None = None
    ) -> None:
        import threading

        from omnivoice import OmniVoice

        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        window = batch_window_s if batch_window_s is not None else (0.03 if device.startswith("cuda") else 0.0)
        self.batcher = LengthBucketBatcher(self._locked_batch, window_s=window, max_batch=self.max_batch)
        self._lock = threading.Lock()  # torch's global RNG: one seeded batch at a time
        self.model = place(from_pretrained(OmniVoice, name, dtype=self.dtype), device, self.dtype)
        self.model.audio_tokenizer = self.model.audio_tokenizer.to(device).eval()
        self.sample_rate = int(self.model.sampling_rate)
        self.frame_rate = float(self.model.audio_tokenizer.config.frame_rate)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        cloning = items[0][1].size > 0  # one backend instance serves one slot: a batch is all clones or all TTS
        voices = {}
        if cloning:
            voices = dict(
                ref_audio=[(torch.from_numpy(ref)[None], self.sample_rate) for _, ref, _, _ in items],
                ref_text=[ref_text for _, _, ref_text, _ in items],
            )
        with torch.inference_mode(), self.stage("decoder"):  # length estimate, unmasking steps and the codec
            audio = self.model.generate(text=[text for text, _, _, _ in items], language=LANGUAGE, **voices)
        return [np.asarray(clip, np.float32).reshape(-1) for clip in audio]
