"""Pocket TTS (Kyutai) as voice clone and Gradium Phonon as text to speech, via transformers' one processor for both.

Both are a causal transformer over one stream (voice, text, then audio latents), a flow head that samples one 32-d
continuous latent per 12.5 Hz frame and an end-of-speech head; `PocketTTSProcessor` holds the codec (its
`audio_tokenizer`, a Mimi-style model) that encodes a voice to latents and decodes the generated ones to 24 kHz.
The prompt is the checkpoint's chat template's rendering of one user turn: Pocket TTS's voice (the reference
clip: `audio_prompt_bos_token`, then `audio_token`, which the processor expands to one token per codec frame of the
clip, ended on a short pause as the feature extractor does) and the text; the prompt ends on `audio_bos_token`.
Neither takes the clip's transcript. Gradium Phonon's voice prompt is latents of a separate speaker codec (a Mimi
encoder, `audio_prompt_dim` wide) that no class in transformers 5.23 builds, so a waveform cannot be its voice: it is
served as TTS, a text-only prompt in the checkpoint's own (fine-tuned) voice; the precomputed latents of a checkpoint's
`voices/` are not used. Requests of one length bucket run as one left-padded batch (voices right-padded by the
processor). On CUDA: bf16 (fp16 before compute capability 8.0), SDPA in the backbone.
"""

from __future__ import annotations

import numpy as np

from audionet.models.hf.loading import place
from audionet.models.hf.speech_lm import SpeechLm, SpeechLmCloner, SpeechLmSynthesizer, waveforms

MAX_BATCH = 4


class _PocketTtsFamily(SpeechLm):
    max_batch = MAX_BATCH
    model_class: str  # the transformers class of the family
    voiced: bool  # whether the request's reference clip is the voice prompt

    def __init__(
        self, name: str, *, device: str = "cpu", dtype: str = "auto", batch_window_s: float | None = None
    ) -> None:
        import transformers

        self._load(name, device, dtype, batch_window_s, getattr(transformers, self.model_class), "sdpa")
        self.processor.audio_tokenizer = place(self.processor.audio_tokenizer, device, self.dtype)
        self.sample_rate = int(self.processor.feature_extractor.sampling_rate)
        self.frame_rate = float(self.model.config.frame_rate)

    def prompt(self, text: str) -> str:
        """The chat template's rendering of one user turn: the voice (when cloning) and the text."""
        content = [{"type": "audio"}] if self.voiced else []
        conversation = [{"role": "user", "content": [*content, {"type": "text", "text": text}]}]
        return self.processor.apply_chat_template(conversation, tokenize=False)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        with torch.inference_mode():
            with self.stage("audio_codec"):  # the voice -> codec latents happens inside the processor call
                inputs = self.processor(
                    text=[self.prompt(text) for text, _, _, _ in items],
                    audio=[ref for _, ref, _, _ in items] if self.voiced else None,
                    sampling_rate=self.sample_rate,
                    padding=True,
                    return_tensors="pt",
                ).to(self.device)
            with self.stage(
                "decoder"
            ):  # sampled: the flow head starts from seeded noise (the checkpoint's temperature)
                out = self.model.generate(**inputs, max_new_tokens=frames, do_sample=True, return_dict_in_generate=True)
            with self.stage("audio_codec"):
                audio = self.processor.decode(out.audio_latents, out.audio_latents_mask)
        return waveforms(audio)


class PocketTtsVoiceCloner(_PocketTtsFamily, SpeechLmCloner):
    """kyutai Pocket TTS (transformers `pocket_tts`): the reference clip is the voice prompt."""

    model_class, voiced = "PocketTTSForConditionalGeneration", True


class PhononSynthesizer(_PocketTtsFamily, SpeechLmSynthesizer):
    """Gradium Phonon (transformers `gradium_phonon_tts`): text only, in the checkpoint's voice."""

    model_class, voiced = "GradiumPhononTTSForConditionalGeneration", False
