"""VoxCPM2 (openbmb/VoxCPM2, or a local folder in its layout) through the voxcpm package, as voice clone and as text
to speech: one backend serves both slots. `--vc.model voxcpm:openbmb/VoxCPM2` (`--tts.model` the same).

VoxCPM2 is a tokenizer-free speech LM: a MiniCPM-4 LM over the text and AudioVAE V2 latents in patches of 4 (6.25 a
second of 16 kHz input), a residual acoustic LM, and a local DiT that draws each patch in 10 flow-matching steps with
classifier-free guidance 2 (the package's defaults); the VAE decodes at 48 kHz. It stops by its stop head, at the
latest at the speech LMs' frame budget (`SpeechLm.frames_for`). A clone is the package's "ultimate cloning": the
reference both as the isolated voice prefix and as the prompt its transcript continues. The package reads a reference
from a file path only (`librosa.load`), so each request's clip is written to a private temporary folder of this
backend's own (never a path from the wire) and removed after. Text to speech gives no reference: the model picks a
voice (one voice name, `default`). One request at a time (its KV caches are sized for a batch of one).

Loaded as `VoxCPM2Model.from_local` does (config.json, tokenizer, audiovae and model safetensors) but with the dtype
chosen here (from_local keeps the checkpoint's bf16 on a CPU) and strictly (from_local ignores missing weights).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading

import numpy as np

from audionet.lib.core.errors import BackendError
from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.hf.loading import from_pretrained, hub_folder, resolve_dtype
from audionet.models.hf.speech_lm import SpeechLmCloner, SpeechLmSynthesizer

STEPS, GUIDANCE = 10, 2.0  # the package's defaults
FILES = ("config.json", "model.safetensors", "audiovae.safetensors", "tokenizer*", "special_tokens_map.json")


def load_model(folder: str, device: str, dtype):
    """The package's VoxCPM2Model from `folder` on `device` in `dtype`; a missing or mismatched weight is one line."""
    import torch
    from safetensors.torch import load_file
    from transformers import LlamaTokenizerFast
    from voxcpm.model.voxcpm2 import VoxCPM2Model, VoxCPMConfig
    from voxcpm.modules.audiovae import AudioVAEV2

    with open(os.path.join(folder, "config.json"), encoding="utf-8") as handle:
        raw = json.load(handle)
    if str(raw.get("architecture", "")).lower() != "voxcpm2":
        raise BackendError(f"{folder} is not a VoxCPM2 checkpoint (config.json's architecture is not voxcpm2)")
    config = VoxCPMConfig.model_validate(raw | {"dtype": str(dtype).removeprefix("torch."), "device": device})
    tokenizer = from_pretrained(LlamaTokenizerFast, folder)
    model = VoxCPM2Model(config, tokenizer, AudioVAEV2(config=config.audio_vae_config), device=device)
    state = load_file(os.path.join(folder, "model.safetensors"))
    state |= {f"audio_vae.{k}": v for k, v in load_file(os.path.join(folder, "audiovae.safetensors")).items()}
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise BackendError(f"cannot load {folder}: {str(error).splitlines()[0][:160]}") from None
    model = model.to(device=device, dtype=dtype).eval()
    model.audio_vae = model.audio_vae.to(torch.float32)  # as from_local: the VAE runs in fp32
    return model


class VoxCpmSpeech(SpeechLmCloner, SpeechLmSynthesizer):
    def __init__(
        self, name: str, *, device: str = "cpu", dtype: str = "auto", batch_window_s: float | None = None
    ) -> None:
        self.model_id, self.device, self.dtype = name, device, resolve_dtype(dtype, device)
        self.batcher = LengthBucketBatcher(self._locked_batch, window_s=batch_window_s or 0.0, max_batch=1)
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time
        self.model = load_model(hub_folder(name, FILES), device, self.dtype)
        self.sample_rate = int(self.model.sample_rate)  # 48 kHz out (the VAE encodes at 16 kHz)
        self.frame_rate = self.model._encode_sample_rate / (self.model.patch_size * self.model.chunk_size)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import soundfile
        import torch

        (text, ref, ref_text, _seed), settings = items[0], dict(inference_timesteps=STEPS, cfg_value=GUIDANCE)
        with tempfile.TemporaryDirectory(prefix="audionet-voxcpm-") as private:
            if ref.size:  # a clone: the reference as the voice and as the prompt its transcript continues
                path = os.path.join(private, "reference.wav")
                soundfile.write(path, ref, self.sample_rate, subtype="FLOAT")
                settings |= dict(prompt_text=ref_text, prompt_wav_path=path, reference_wav_path=path)
            with torch.inference_mode(), self.stage("decoder"):  # the LMs, the DiT's steps and the VAE
                wave = self.model.generate(target_text=text, max_len=frames, **settings)
        return [wave.reshape(-1).float().cpu().numpy()]
