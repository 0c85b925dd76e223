"""XTTS-v2 (coqui/XTTS-v2, or a local folder in its layout) through the coqui-tts package: zero-shot voice clone, and
text to speech in the checkpoint's own speakers. One backend serves both slots.

A GPT-2 reads the voice's conditioning latents (a perceiver over mel chunks of the reference, resampled to 22.05 kHz)
and the text's BPE tokens, and writes audio codes, 21.5 a second (a 1024-sample stride at 22.05 kHz); its latents for
those codes go through a HiFi-GAN conditioned on the reference's speaker embedding, at 24 kHz. The folder holds
Coqui's `config.json` (`"model": "xtts"`, which `hf:` routes on), `model.pth`, `vocab.json` and, for text to speech,
`speakers_xtts.pth` (named voices with their latents; a request's `voice` picks one, the first by default). Sampled
with the checkpoint's settings (temperature, top-k, top-p, repetition penalty), seeded per request; the codes stop at
the GPT's stop token, and at the latest at the speech LMs' speaking-rate bound (a stop token that never comes, as with
random weights, ends there). English text (`en`). One request at a time (Coqui's inference takes one text). fp32 on
every device: Coqui's inference is written for it.
"""

from __future__ import annotations

import math
import os
import threading

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import SpeechSynthesizer, VoiceCloner
from audionet.models.hf.loading import hub_file, seed_everything
from audionet.models.hf.speech_lm import (
    CHARS_PER_SECOND,
    MAX_REFERENCE_SECONDS,
    MAX_SECONDS,
    answer,
    warm_up_clone,
)

LANGUAGE = "en"
FILES = ("config.json", "model.pth", "vocab.json")
SPEAKERS = "speakers_xtts.pth"


def checkpoint_folder(name: str) -> str:
    """The folder holding XTTS's files (a local folder, or the HF cache's snapshot of the repo)."""
    paths = [hub_file(name, filename) for filename in FILES]
    try:
        hub_file(name, SPEAKERS)  # optional: text to speech needs it, voice clone does not
    except BackendError:
        pass
    return os.path.dirname(paths[0])


class XttsSpeech(VoiceCloner, SpeechSynthesizer):
    max_seconds = MAX_SECONDS

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from TTS.tts.configs.xtts_config import XttsConfig
        from TTS.tts.models.xtts import Xtts

        folder = checkpoint_folder(name)
        self.config = XttsConfig()
        self.config.load_json(os.path.join(folder, "config.json"))
        model = Xtts.init_from_config(self.config)
        model.load_checkpoint(self.config, checkpoint_dir=folder, eval=True)
        self.model, self.model_id, self.device = model.to(device), name, device
        args = self.config.model_args
        self.sample_rate = int(args.output_sample_rate)
        self.input_rate = int(args.input_sample_rate)
        self.frame_rate = self.input_rate / int(args.gpt_code_stride_len)  # audio codes a second
        manager = model.speaker_manager
        self.speakers = dict(manager.speakers) if manager is not None else {}
        self.voices = tuple(self.speakers)
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time

    def codes_for(self, text: str) -> int:
        seconds = min(self.max_seconds, 1.0 + len(text) / CHARS_PER_SECOND)
        return math.ceil(seconds * self.frame_rate)

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        import torch

        clip = reference.samples[: int(MAX_REFERENCE_SECONDS * reference.sample_rate)]
        samples = resample(Audio(clip, reference.sample_rate), self.input_rate).samples.astype(np.float32)
        audio = torch.from_numpy(samples)[None].to(self.device)
        with self._lock, torch.inference_mode():
            with self.stage("audio_codec"):  # the reference -> conditioning latents and speaker embedding
                latents = self.model.get_gpt_cond_latents(
                    audio, self.input_rate, length=self.config.gpt_cond_len, chunk_length=self.config.gpt_cond_chunk_len
                )
                speaker = self.model.get_speaker_embedding(audio, self.input_rate)
            return self._speak(text, latents, speaker, seed)

    def synthesize(self, text: str, *, voice: str | None = None, seed: int = 0) -> Audio:
        import torch

        if not self.speakers:
            raise BackendError(f"{self.model_id} has no {SPEAKERS}: it can clone a voice, not speak in its own")
        name = voice or self.voices[0]
        if name not in self.speakers:
            raise WireError(f"unknown voice {name!r}; {self.model_id} has {len(self.voices)} voices")
        latents, speaker = (self.speakers[name][key] for key in ("gpt_cond_latent", "speaker_embedding"))
        with self._lock, torch.inference_mode():
            return self._speak(text, latents, speaker, seed)

    def _speak(self, text: str, latents, speaker, seed: int) -> Audio:
        if not text.strip():
            raise WireError("text is empty")
        seed_everything(seed)
        config = self.config
        with self.stage("decoder"):  # GPT codes, their latents and the HiFi-GAN, all inside Coqui's inference
            out = self.model.inference(
                " ".join(text.split()),
                LANGUAGE,
                latents,
                speaker,
                temperature=config.temperature,
                length_penalty=config.length_penalty,
                repetition_penalty=config.repetition_penalty,
                top_k=config.top_k,
                top_p=config.top_p,
                max_new_tokens=self.codes_for(text),
            )
        return answer(np.asarray(out["wav"]).reshape(-1)[: int(self.max_seconds * self.sample_rate)], self.sample_rate)

    def warmup(self) -> None:
        warm_up_clone(self)
