"""Stand-in for VoxCPM2 (openbmb/VoxCPM2), built from the voxcpm package's own config classes (`VoxCPMConfig` over
a `MiniCPM4Config` LM, the local encoder and DiT configs, `AudioVAEConfigV2`) and its model (`VoxCPM2Model`), saved
in the layout `VoxCPM2Model.from_local` reads: config.json (`architecture: voxcpm2`), model.safetensors,
audiovae.safetensors and a tokenizer (byte-level BPE, made here). The stop head is zeroed: random weights stop at
once (after `min_len` patches), a zeroed head never does, so the answer's length is the backend's frame budget."""

from __future__ import annotations

import json
import os

from audionet.models.random_weights.tokenizers import byte_level_bpe

SPECIALS = ["<unk>", "<s>", "</s>"]


def voxcpm2(out: str, *, lm: dict, model: dict, vae: dict) -> None:
    import torch
    from safetensors.torch import save_file
    from voxcpm.model.voxcpm2 import VoxCPM2Model, VoxCPMConfig
    from voxcpm.modules.audiovae import AudioVAEConfigV2, AudioVAEV2

    tokenizer = byte_level_bpe(SPECIALS, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    rope = dict(type="longrope", long_factor=[1.0], short_factor=[1.0], original_max_position_embeddings=32768)
    lm = dict(bos_token_id=1, eos_token_id=2, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=rope) | lm
    lm |= dict(vocab_size=len(tokenizer), max_position_embeddings=32768)
    config = VoxCPMConfig(
        lm_config=lm, audio_vae_config=AudioVAEConfigV2(**vae), device="cpu", dtype="float32", **model
    )
    os.makedirs(out, exist_ok=True)
    tokenizer.save_pretrained(out)
    built = VoxCPM2Model(config, tokenizer, AudioVAEV2(config=config.audio_vae_config), device="cpu")
    torch.nn.init.zeros_(built.stop_head.weight)
    state = {k: v.contiguous() for k, v in built.state_dict().items()}
    save_file(
        {k[len("audio_vae.") :]: v for k, v in state.items() if k.startswith("audio_vae.")},
        os.path.join(out, "audiovae.safetensors"),
    )
    save_file(
        {k: v for k, v in state.items() if not k.startswith("audio_vae.")}, os.path.join(out, "model.safetensors")
    )
    saved = json.loads(config.model_dump_json()) | {"architecture": "voxcpm2", "dtype": "bfloat16", "device": "cuda"}
    with open(os.path.join(out, "config.json"), "w") as handle:
        json.dump(saved, handle, indent=1)
