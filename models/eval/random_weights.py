"""The standard and large profiles' evaluators with random weights, built from config and saved
so they load through the very code path the real checkpoints use (by folder instead of HF id).

`size="tiny"`: small dimensions of each architecture, for tests. `size="full"`: the real
checkpoints' dimensions, for timing (benchmarks/evaluators/main.py); their scores mean nothing.
    Whisper large-v3-turbo / large-v3   d_model 1280, 32 encoder layers, 4 / 32 decoder layers,
                                        128 mels (English vocabulary), in the format of the engine the
                                        device runs it on (models/eval/whisper_asr.engine): converted to
                                        CTranslate2 for the CPU, transformers' own for CUDA
    WavLM-Base+ SV                      transformers' WavLM base dimensions + x-vector head
    UTMOS                               utmos-pytorch's fixed wav2vec 2.0 base + BLSTM
    CLAP larger_clap_music              HTSAT-base audio tower (depths 2,2,12,2) + RoBERTa-base
    Audiobox Aesthetics                 the package's fixed WavLM base+ encoder and four heads
UTMOS and Audiobox build only at full size: their packages fix the architecture.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

from audionet.models.eval.whisper_asr import CT2, TRANSFORMERS, engine

SIZES = ("tiny", "full")
TRANSFORMERS_SUFFIX = "-transformers"  # the transformers-format Whisper stand-in (Whisper on CUDA)


def _whisper(out: str, size: str, decoder_layers: int, engine: str) -> None:
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperTokenizer

    from audionet.models.eval.whisper_asr import shipped_model_path

    mels = 128 if size == "full" else 80
    dims = (
        dict(
            d_model=1280,
            encoder_layers=32,
            decoder_layers=decoder_layers,
            encoder_attention_heads=20,
            decoder_attention_heads=20,
            encoder_ffn_dim=5120,
            decoder_ffn_dim=5120,
        )
        if size == "full"
        else dict(
            d_model=64,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=128,
            decoder_ffn_dim=128,
        )
    )
    hf = out if engine == TRANSFORMERS else out + ".hf"
    WhisperForConditionalGeneration(WhisperConfig(vocab_size=51864, num_mel_bins=mels, **dims)).save_pretrained(hf)
    # The shipped tiny.en tokenizer: a real Whisper vocabulary, so decoding runs the real path.
    WhisperTokenizer(tokenizer_file=os.path.join(shipped_model_path(), "tokenizer.json")).save_pretrained(hf)
    WhisperFeatureExtractor(feature_size=mels).save_pretrained(hf)
    if engine == TRANSFORMERS:
        return
    import ctranslate2

    files = ["tokenizer.json", "preprocessor_config.json"]
    ctranslate2.converters.TransformersConverter(hf, copy_files=files).convert(out, force=True)
    shutil.rmtree(hf)


def _wavlm_sv(out: str, size: str) -> None:
    from transformers import Wav2Vec2FeatureExtractor, WavLMConfig, WavLMForXVector

    config = (
        WavLMConfig(xvector_output_dim=512)
        if size == "full"
        else WavLMConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            conv_dim=(32, 32),
            conv_stride=(5, 4),
            conv_kernel=(10, 8),
            num_conv_pos_embeddings=16,
            tdnn_dim=(32, 32),
            tdnn_kernel=(3, 1),
            tdnn_dilation=(1, 1),
            xvector_output_dim=24,
        )
    )
    WavLMForXVector(config).save_pretrained(out)
    Wav2Vec2FeatureExtractor(return_attention_mask=True).save_pretrained(out)


def _utmos(out: str, size: str) -> None:
    import torch
    from utmos_pytorch.utmos_torch import UTMOSModel

    from audionet.models.eval.utmos import CHECKPOINT

    os.makedirs(out, exist_ok=True)
    torch.save(UTMOSModel().state_dict(), os.path.join(out, CHECKPOINT))


def _clap(out: str, size: str) -> None:
    from transformers import (
        ClapAudioConfig,
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapProcessor,
        ClapTextConfig,
        RobertaTokenizer,
    )

    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    for piece in list(letters + ",") + ["Ġ"] + ["Ġ" + c for c in letters]:
        vocab[piece] = len(vocab)
    tokenizer = RobertaTokenizer(vocab=vocab, merges=[("Ġ", c) for c in letters])  # letters only: timing is the same
    if size == "full":
        text = ClapTextConfig(vocab_size=50265)
        audio = ClapAudioConfig(
            patch_embeds_hidden_size=128, depths=[2, 2, 12, 2], num_attention_heads=[4, 8, 16, 32], hidden_size=1024
        )
    else:
        text = ClapTextConfig(
            vocab_size=len(vocab),
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=80,
            projection_dim=16,
        )
        audio = ClapAudioConfig(
            patch_embeds_hidden_size=16, depths=[1, 1], num_attention_heads=[2, 2], hidden_size=32, projection_dim=16
        )
    config = ClapConfig(
        text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=512 if size == "full" else 16
    )
    ClapModel(config).save_pretrained(out)
    ClapProcessor(feature_extractor=ClapFeatureExtractor(truncation="rand_trunc"), tokenizer=tokenizer).save_pretrained(
        out
    )


def _audiobox(out: str, size: str) -> None:
    from audiobox_aesthetics.model.aes import AXES_NAME, AesMultiOutput

    calibration = {axis: {"mean": 5.5, "std": 1.5} for axis in AXES_NAME}  # the heads' output scale
    AesMultiOutput(target_transform=calibration).save_pretrained(out)


# The profiles' HF ids -> (builder, its fixed sizes: None = both); Whisper per engine.
BUILDERS: dict[str, tuple[Callable[[str, str], None], tuple[str, ...]]] = {
    **{
        f"{name}{suffix}": (lambda out, size, layers=layers, engine=engine: _whisper(out, size, layers, engine), SIZES)
        for name, layers in (("large-v3-turbo", 4), ("large-v3", 32))
        for suffix, engine in (("", CT2), (TRANSFORMERS_SUFFIX, TRANSFORMERS))
    },
    "microsoft/wavlm-base-plus-sv": (_wavlm_sv, SIZES),
    "Blinorot/UTMOS-PyTorch": (_utmos, ("full",)),
    "laion/larger_clap_music": (_clap, SIZES),
    "facebook/audiobox-aesthetics": (_audiobox, ("full",)),
}


def random_model(name: str, cache_dir: str, size: str = "full") -> str:
    """The folder of a random-weight stand-in for the evaluator `name` (built once)."""
    if name not in BUILDERS:
        raise ValueError(f"no random-weight builder for {name!r}; known: {', '.join(BUILDERS)}")
    build, sizes = BUILDERS[name]
    size = size if size in sizes else sizes[0]
    out = os.path.join(cache_dir, f"eval-{name.replace('/', '--')}-random-{size}")
    marker = os.path.join(out, ".complete")
    if not os.path.exists(marker):
        import torch

        torch.manual_seed(0)
        shutil.rmtree(out, ignore_errors=True)
        build(out, size)
        open(marker, "w").close()
    return out


def stand_in(scheme: str, name: str, device: str) -> str:
    """The BUILDERS key for `scheme:name` on `device`: a Whisper stand-in in its engine's format."""
    if scheme == "whisper" and engine(name, device)[0] == TRANSFORMERS:
        return name + TRANSFORMERS_SUFFIX
    return name


def random_specs(specs: dict[str, str], cache_dir: str, size: str = "full", device: str = "cpu") -> dict[str, str]:
    """Each spec naming a known checkpoint becomes the same scheme pointing at its random stand-in
    (for the engine that `device` runs it on)."""
    out = {}
    for kind, spec in specs.items():
        parts = []
        for one in spec.split(","):
            scheme, _, name = one.partition(":")
            known = name in BUILDERS
            parts.append(f"{scheme}:{random_model(stand_in(scheme, name, device), cache_dir, size)}" if known else one)
        out[kind] = ",".join(parts)
    return out
