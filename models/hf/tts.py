"""transformers text-to-speech by HF id or local path: VITS/MMS and SpeechT5 + HiFi-GAN.

Both speak one sentence at a time (models/sentences.py) so long texts stay
inside the models' context. VITS samples durations and latents, so the seed
is applied per request; SpeechT5 is deterministic given its speaker vector.
SpeechT5 needs a 512-d x-vector: `speaker_embeddings.npy` beside the model
when present, else a fixed unit vector derived from seed 0 (a made-up but
stable speaker: the CMU-Arctic x-vectors are a dataset not available offline).
Its vocoder is `<model dir>/vocoder` when present, else microsoft/speecht5_hifigan. Its spectrogram stops
where the stop head says, and at the latest after the speaking-rate bound of the speech LMs (1 s plus 12
characters a second): a stop head that never fires (random weights) ends there, at a speech-like length.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.models.base import SpeechSynthesizer
from audionet.models.hf.loading import from_pretrained, place, resolve_dtype, seed_everything
from audionet.models.hf.speech_lm import CHARS_PER_SECOND
from audionet.models.sentences import speak_in_sentences

SINGLE_VOICE = ("default",)


class SentenceSynthesizer(SpeechSynthesizer):
    """One voice, spoken sentence by sentence under one seed (the VITS families of transformers and coqui-tts, and
    SpeechT5): a family implements `_speak(sentence)`."""

    max_sentence_chars = 200

    def __init__(self, name: str, device: str, dtype: str) -> None:
        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time

    def synthesize(self, text: str, *, voice: str | None = None, seed: int = 0) -> Audio:
        if voice not in (None, *SINGLE_VOICE):
            raise WireError(f"{self.model_id} has one voice; omit voice or send 'default'")
        import torch

        with self._lock, torch.inference_mode():
            seed_everything(seed)
            return speak_in_sentences(text, self._speak, self.max_sentence_chars)

    def _speak(self, sentence: str) -> Audio:
        raise NotImplementedError


class VitsSynthesizer(SentenceSynthesizer):
    """facebook/mms-tts-* and other VitsModel checkpoints."""

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from transformers import AutoTokenizer, VitsModel

        # float32 unless asked otherwise: in bf16 on an H200 its flow's spline stopped at "Discriminant has
        # negative values" (the first GPU call, 2026-11-27); the model is small, so half precision buys little
        super().__init__(name, device, "float32" if dtype == "auto" else dtype)
        self.tokenizer = from_pretrained(AutoTokenizer, name)
        self.model = place(from_pretrained(VitsModel, name), device, self.dtype)
        self.sample_rate = int(self.model.config.sampling_rate)

    def _speak(self, sentence: str) -> Audio:
        inputs = self.tokenizer(sentence, return_tensors="pt").to(self.device)
        if inputs["input_ids"].shape[-1] == 0:
            raise WireError("text has no characters this voice can speak")
        with self.stage("decoder"):
            waveform = self.model(**inputs).waveform
        return Audio(waveform[0].float().cpu().numpy(), self.sample_rate)


class SpeechT5Synthesizer(SentenceSynthesizer):
    """microsoft/speecht5_tts (+ HiFi-GAN vocoder)."""

    # Minimum spectrogram steps per input token. 0 for real weights (the stop head
    # ends speech); benchmarks of random weights set ~4 so the clip has a
    # realistic length (~2 frames of 16 ms per character).
    min_length_ratio = 0.0

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        import torch
        from transformers import AutoTokenizer, SpeechT5ForTextToSpeech, SpeechT5HifiGan

        super().__init__(name, device, dtype)
        self.tokenizer = from_pretrained(AutoTokenizer, name)
        self.model = place(from_pretrained(SpeechT5ForTextToSpeech, name), device, self.dtype)
        local_vocoder = os.path.join(name, "vocoder")
        vocoder_name = local_vocoder if os.path.isdir(local_vocoder) else "microsoft/speecht5_hifigan"
        self.vocoder = place(from_pretrained(SpeechT5HifiGan, vocoder_name), device, self.dtype)
        self.sample_rate = int(self.vocoder.config.sampling_rate)
        self.frame_rate = self.sample_rate / math.prod(self.vocoder.config.upsample_rates)  # mel frames a second
        dim = int(self.model.config.speaker_embedding_dim)
        stored = os.path.join(name, "speaker_embeddings.npy")
        if os.path.isfile(stored):
            vector = np.load(stored).astype(np.float32).reshape(-1)[:dim]
        else:
            vector = np.random.default_rng(0).standard_normal(dim).astype(np.float32)
            vector /= np.linalg.norm(vector)
        self.speaker = torch.from_numpy(vector)[None].to(device=device, dtype=self.dtype)

    def _speak(self, sentence: str) -> Audio:
        inputs = self.tokenizer(sentence, return_tensors="pt").to(self.device)
        frames = (1.0 + len(sentence) / CHARS_PER_SECOND) * self.frame_rate  # the latest stop
        tokens = max(1, inputs["input_ids"].shape[-1])  # generate_speech counts its length limits per token
        with self.stage("decoder"):  # text encoder + spectrogram decoder, both inside generate_speech
            spectrogram = self.model.generate_speech(
                inputs["input_ids"], self.speaker, minlenratio=self.min_length_ratio, maxlenratio=frames / tokens
            )
        with self.stage("audio_codec"):
            waveform = self.vocoder(spectrogram)
        return Audio(waveform.reshape(-1).float().cpu().numpy(), self.sample_rate)
