"""Stand-in for F5-TTS (SWivid/F5-TTS's F5TTS_v1_Base), built from the f5-tts package's own classes (`CFM` over a
`DiT`) and the vocos package's (`Vocos.from_hparams` on a config in its format), saved in the layout the backend
reads: `F5TTS_v1_Base/model_1250000.safetensors` and `vocab.txt` (space first, as the package requires, then
characters), `F5TTS_v1_Base.yaml` (the package's config with the stand-in's sizes) and `vocos/` (config.yaml and
pytorch_model.bin)."""

from __future__ import annotations

import os

VOCAB = [" ", *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'-:;\"()"]


def vocos_config(mels: int, rate: int, hop: int, n_fft: int, dim: int, layers: int) -> dict:
    """charactr/vocos-mel-24khz's config.yaml, sized."""
    return {
        "feature_extractor": {
            "class_path": "vocos.feature_extractors.MelSpectrogramFeatures",
            "init_args": {"sample_rate": rate, "n_fft": n_fft, "hop_length": hop, "n_mels": mels, "padding": "center"},
        },
        "backbone": {
            "class_path": "vocos.models.VocosBackbone",
            "init_args": {"input_channels": mels, "dim": dim, "intermediate_dim": 3 * dim, "num_layers": layers},
        },
        "head": {"class_path": "vocos.heads.ISTFTHead", "init_args": {"dim": dim, "n_fft": n_fft, "hop_length": hop}},
    }


def f5_tts(out: str, *, arch: dict, vocos: dict) -> None:
    import torch
    import yaml
    from f5_tts.model import CFM, DiT
    from safetensors.torch import save_file
    from vocos import Vocos

    from audionet.models.f5.clone import CHECKPOINT, MODEL, architecture

    config = architecture()
    config["arch"] |= arch
    mel = config["mel_spec"]
    os.makedirs(os.path.join(out, MODEL), exist_ok=True)
    with open(os.path.join(out, MODEL, "vocab.txt"), "w") as handle:
        handle.writelines(f"{char}\n" for char in VOCAB)
    with open(os.path.join(out, f"{MODEL}.yaml"), "w") as handle:
        yaml.safe_dump({"model": config}, handle)
    model = CFM(
        transformer=DiT(**config["arch"], text_num_embeds=len(VOCAB), mel_dim=mel["n_mel_channels"]),
        mel_spec_kwargs={k: mel[k] for k in ("n_fft", "hop_length", "win_length", "n_mel_channels")}
        | {"target_sample_rate": mel["target_sample_rate"], "mel_spec_type": mel["mel_spec_type"]},
        vocab_char_map={char: i for i, char in enumerate(VOCAB)},
    )
    state = {f"ema_model.{k}": v.contiguous() for k, v in model.state_dict().items()}
    save_file(state, os.path.join(out, CHECKPOINT))
    os.makedirs(os.path.join(out, "vocos"), exist_ok=True)
    hparams = vocos_config(mel["n_mel_channels"], mel["target_sample_rate"], mel["hop_length"], mel["n_fft"], **vocos)
    with open(os.path.join(out, "vocos", "config.yaml"), "w") as handle:
        yaml.safe_dump(hparams, handle)
    torch.save(
        Vocos.from_hparams(os.path.join(out, "vocos", "config.yaml")).state_dict(),
        os.path.join(out, "vocos", "pytorch_model.bin"),
    )
