"""Voice clone with VibeVoice (vibevoice/VibeVoice-1.5B-hf, or a local path) via transformers.

VibeVoice is a Qwen2.5 LM that emits one placeholder token per 7.5 Hz acoustic frame; a diffusion head turns
each placeholder's hidden state into an acoustic latent (classifier-free guidance against a branch with no
context), the acoustic tokenizer decodes it to 24 kHz, and its acoustic and semantic features are fed back.
The reference clip is the speaker's voice sample: the checkpoint's chat template puts it under "Voice input"
as `<|vision_start|><|vision_pad|><|vision_end|>` (the processor expands the pad to one token per frame of
the clip) and the text under "Text input", and the prompt ends with the audio start token. The voice sample
is all VibeVoice takes: its template has no place for the clip's transcript, which is not used.
Requests of one length bucket run as one left-padded batch (the model's batched generate, one sampling
stream). On CUDA: bf16 (fp16 before compute capability 8.0), SDPA in the LM (the acoustic tokenizer has none).
"""

from __future__ import annotations

import numpy as np

from audionet.models.hf.speech_lm import SpeechLmCloner, waveforms

SPEAKER = "0"
MAX_BATCH = 4


class VibeVoiceVoiceCloner(SpeechLmCloner):
    max_batch = MAX_BATCH

    def __init__(
        self, name: str, *, device: str = "cpu", dtype: str = "auto", batch_window_s: float | None = None
    ) -> None:
        from transformers import VibeVoiceForConditionalGeneration

        # SDPA in the language model only: transformers refuses it for VibeVoice's audio tokenizer
        self._load(name, device, dtype, batch_window_s, VibeVoiceForConditionalGeneration, {"text_config": "sdpa"})
        extractor = self.processor.feature_extractor
        self.sample_rate = int(extractor.sampling_rate)
        self.frame_rate = self.sample_rate / int(self.model.config.audio_config.hop_length)

    def prompt(self, text: str) -> str:
        """The chat template's rendering of one speaker's voice sample and text."""
        conversation = [{"role": SPEAKER, "content": [{"type": "text", "text": text}, {"type": "audio"}]}]
        return self.processor.apply_chat_template(conversation, tokenize=False)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        with torch.inference_mode():
            inputs = self.processor(
                text=[self.prompt(text) for text, _, _, _ in items],
                audio=[ref for _, ref, _, _ in items],
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            inputs["input_values"] = inputs["input_values"].to(self.dtype)
            with self.stage("decoder"):  # LM, diffusion head and acoustic decoder step by step inside generate
                audio = self.model.generate(**inputs, max_new_tokens=frames)
        return waveforms(audio)
