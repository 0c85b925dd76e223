"""Coqui TTS's VITS models (e.g. tts_models/en/ljspeech/vits, or any folder with Coqui's `config.json` whose
`"model"` is `vits` and its `model.pth` or `model_file.pth`) through the coqui-tts package, as text to speech.

The package's own tokenizer turns text into the config's characters or phonemes (a phoneme config runs the
`espeak-ng` program, which the package expects on the PATH), and `Vits.inference` samples durations and latents
(the config's noise scales), so the seed is applied per request; sentences are spoken one by one. A multi-speaker
checkpoint speaks in its first speaker (one voice, `default`). 22.05 kHz for the published English models. fp32.
"""

from __future__ import annotations

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.hf.loading import hub_file
from audionet.models.hf.tts import SentenceSynthesizer

CHECKPOINTS = ("model.pth", "model_file.pth")  # the name in Coqui's newer and older releases


def checkpoint(name: str) -> str:
    for filename in CHECKPOINTS:
        try:
            return hub_file(name, filename)
        except BackendError:
            continue
    raise BackendError(f"model {name} has neither {' nor '.join(CHECKPOINTS)}")


class CoquiVitsSynthesizer(SentenceSynthesizer):
    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        import torch
        from TTS.tts.configs.vits_config import VitsConfig
        from TTS.tts.models.vits import Vits

        super().__init__(name, device, "float32")
        config = VitsConfig()
        config.load_json(hub_file(name, "config.json"))
        model = Vits.init_from_config(config)
        model.load_checkpoint(config, checkpoint(name), eval=True)
        self.model = model.to(device)
        self.sample_rate = int(config.audio.sample_rate)
        speakers = model.speaker_manager.name_to_id if model.speaker_manager is not None else {}
        first = next(iter(speakers.values()), None)
        self.speaker = None if first is None else torch.tensor([first], device=device)

    def _speak(self, sentence: str) -> Audio:
        import torch

        ids = self.model.tokenizer.text_to_ids(sentence)
        if not ids:
            raise WireError("text has no characters this voice can speak")
        with self.stage("decoder"):
            out = self.model.inference(torch.tensor([ids], device=self.device), aux_input={"speaker_ids": self.speaker})
        return Audio(np.asarray(out["model_outputs"].reshape(-1).float().cpu().numpy(), np.float32), self.sample_rate)
