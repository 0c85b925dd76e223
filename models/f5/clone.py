"""Zero-shot voice clone with F5-TTS (SWivid/F5-TTS's F5TTS_v1_Base, or a local folder in that layout) through the
f5-tts package: `--vc.model f5-tts:SWivid/F5-TTS`.

F5-TTS is a flow-matching DiT over 100-band mel frames (24 kHz, hop 256: 93.75 a second): given the reference's mel
and the characters of its transcript followed by the text, it fills the frames after the reference in 32 ODE steps
(classifier-free guidance 2, sway sampling -1: the package's defaults), and Vocos turns them into a waveform. The
answer's length is the reference's speaking rate applied to the text (the package's rule: reference frames per UTF-8
byte of its transcript), so the reference's transcript matters. The reference is brought to an RMS of 0.1 when
quieter and the answer scaled back, as the package does. The checkpoint's repository is not self-describing (no
config.json), hence the scheme: the architecture is the package's own `F5TTS_v1_Base.yaml`, the weights
`F5TTS_v1_Base/model_1250000.safetensors` and `F5TTS_v1_Base/vocab.txt`, Vocos from `<folder>/vocos` when present,
else charactr/vocos-mel-24khz. English and Chinese characters (the package's pinyin conversion). One request at a
time; fp32 on the CPU, fp16 on CUDA (the package's choice).
"""

from __future__ import annotations

import os
import threading
from importlib.resources import files

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import VoiceCloner
from audionet.models.hf.loading import hub_file, resolve_dtype, seed_everything
from audionet.models.hf.speech_lm import MAX_REFERENCE_SECONDS, MAX_SECONDS, answer, warm_up_clone

MODEL = "F5TTS_v1_Base"
CHECKPOINT = f"{MODEL}/model_1250000.safetensors"
VOCAB = f"{MODEL}/vocab.txt"
VOCOS = "charactr/vocos-mel-24khz"
TARGET_RMS = 0.1
STEPS, GUIDANCE, SWAY = 32, 2.0, -1.0


def architecture(folder: str | None = None) -> dict:
    """The model and mel settings of the package's own config for F5TTS_v1_Base (a folder's copy when it has one)."""
    import yaml

    path = os.path.join(folder, f"{MODEL}.yaml") if folder else ""
    if not os.path.isfile(path):
        path = str(files("f5_tts").joinpath(f"configs/{MODEL}.yaml"))
    with open(path) as handle:
        model = yaml.safe_load(handle)["model"]
    return {"arch": model["arch"], "mel_spec": model["mel_spec"]}


def vocoder(name: str):
    from vocos import Vocos

    local = os.path.join(name, "vocos") if os.path.isdir(name) else None
    source = local if local and os.path.isdir(local) else VOCOS
    model = Vocos.from_hparams(hub_file(source, "config.yaml"))
    state = __import__("torch").load(hub_file(source, "pytorch_model.bin"), map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model.eval()


class F5VoiceCloner(VoiceCloner):
    max_seconds = MAX_SECONDS

    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from f5_tts.model import CFM, DiT
        from f5_tts.model.utils import get_tokenizer
        from safetensors.torch import load_file

        checkpoint, vocab = hub_file(name, CHECKPOINT), hub_file(name, VOCAB)
        config = architecture(os.path.dirname(os.path.dirname(checkpoint)))
        mel = config["mel_spec"]
        chars, size = get_tokenizer(vocab, "custom")
        model = CFM(
            transformer=DiT(**config["arch"], text_num_embeds=size, mel_dim=mel["n_mel_channels"]),
            mel_spec_kwargs={k: mel[k] for k in ("n_fft", "hop_length", "win_length", "n_mel_channels")}
            | {"target_sample_rate": mel["target_sample_rate"], "mel_spec_type": mel["mel_spec_type"]},
            odeint_kwargs=dict(method="euler"),
            vocab_char_map=chars,
        )
        state = load_file(checkpoint)
        state = {k.replace("ema_model.", ""): v for k, v in state.items() if k not in ("initted", "step")}
        try:
            model.load_state_dict(state)
        except RuntimeError as error:
            raise BackendError(f"cannot load {checkpoint}: {str(error).splitlines()[0][:160]}") from None
        self.dtype = resolve_dtype(dtype, device) if device.startswith("cuda") else resolve_dtype("float32", device)
        self.model = model.to(device=device, dtype=self.dtype).eval()
        self.vocoder = vocoder(name).to(device)
        self.model_id, self.device = name, device
        self.sample_rate, self.hop = int(mel["target_sample_rate"]), int(mel["hop_length"])
        self._lock = threading.Lock()  # torch's global RNG: one seeded request at a time

    def frames_for(self, text: str, reference_frames: int, reference_text: str) -> int:
        """The package's rule: the reference's frames per byte of its transcript, applied to the text's bytes."""
        per_byte = reference_frames / max(1, len(reference_text.encode("utf-8")))
        spoken = min(self.max_seconds * self.sample_rate / self.hop, per_byte * len(text.encode("utf-8")))
        return reference_frames + max(1, int(spoken))

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        import torch
        from f5_tts.model.utils import convert_char_to_pinyin

        if not text.strip():
            raise WireError("text is empty")
        clip = reference.samples[: int(MAX_REFERENCE_SECONDS * reference.sample_rate)]
        ref = resample(Audio(clip, reference.sample_rate), self.sample_rate).samples.astype(np.float32)
        rms = float(np.sqrt(np.mean(ref**2))) if ref.size else 0.0
        gain = TARGET_RMS / rms if 0.0 < rms < TARGET_RMS else 1.0
        text, reference_text = " ".join(text.split()), " ".join(reference_text.split())
        frames = ref.size // self.hop
        total = self.frames_for(text, frames, reference_text)
        prompt = convert_char_to_pinyin([f"{reference_text} {text}"])
        audio = torch.from_numpy(ref * gain)[None].to(self.device, self.dtype)
        with self._lock, torch.inference_mode():
            seed_everything(seed)
            with self.stage("decoder"):  # the ODE steps of the DiT
                mel, _ = self.model.sample(
                    cond=audio,
                    text=prompt,
                    duration=total,
                    steps=STEPS,
                    cfg_strength=GUIDANCE,
                    sway_sampling_coef=SWAY,
                    seed=seed,
                )
            with self.stage("audio_codec"):
                wave = self.vocoder.decode(mel[:, frames:, :].permute(0, 2, 1).float())
        return answer(wave.reshape(-1).float().cpu().numpy() / gain, self.sample_rate)

    def warmup(self) -> None:
        warm_up_clone(self)
