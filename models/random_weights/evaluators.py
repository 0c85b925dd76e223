"""Stand-ins for the evaluators of the standard and large profiles (models/eval/profiles.py): Whisper
(in the format of the engine the device runs it on), WavLM SV, UTMOS, CLAP, Audiobox Aesthetics. Each
loads by folder through the very code path the real checkpoint uses. UTMOS and Audiobox have one size:
their packages fix the architecture."""

from __future__ import annotations

import os
import shutil

from audionet.models.random_weights.tokenizers import roberta_letters, whisper_bytes


def whisper(out: str, *, dims: dict, mels: int, engine: str) -> None:
    """`engine`: models.eval.whisper_asr.CT2 (converted for CTranslate2, the CPU) or TRANSFORMERS (CUDA)."""
    from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperTokenizer

    from audionet.models.eval.whisper_asr import TRANSFORMERS, shipped_model_path

    hf = out if engine == TRANSFORMERS else out + ".hf"
    WhisperForConditionalGeneration(WhisperConfig(vocab_size=51864, num_mel_bins=mels, **dims)).save_pretrained(hf)
    # The shipped tiny.en tokenizer: a real Whisper vocabulary, so decoding runs the real path; one in its
    # layout made here where it is not installed
    shipped = shipped_model_path()
    tokenizer = WhisperTokenizer(tokenizer_file=os.path.join(shipped, "tokenizer.json")) if shipped else whisper_bytes()
    tokenizer.save_pretrained(hf)
    WhisperFeatureExtractor(feature_size=mels).save_pretrained(hf)
    if engine == TRANSFORMERS:
        return
    import ctranslate2

    files = ["tokenizer.json", "preprocessor_config.json"]
    ctranslate2.converters.TransformersConverter(hf, copy_files=files).convert(out, force=True)
    shutil.rmtree(hf)


def wavlm_sv(out: str, *, config: dict) -> None:
    from transformers import Wav2Vec2FeatureExtractor, WavLMConfig, WavLMForXVector

    WavLMForXVector(WavLMConfig(**config)).save_pretrained(out)
    Wav2Vec2FeatureExtractor(return_attention_mask=True).save_pretrained(out)


def utmos(out: str) -> None:
    import torch
    from utmos_pytorch.utmos_torch import UTMOSModel

    from audionet.models.eval.utmos import CHECKPOINT

    os.makedirs(out, exist_ok=True)
    torch.save(UTMOSModel().state_dict(), os.path.join(out, CHECKPOINT))


def clap(out: str, *, text: dict, audio: dict, projection_dim: int) -> None:
    from transformers import ClapAudioConfig, ClapConfig, ClapFeatureExtractor, ClapModel, ClapProcessor, ClapTextConfig

    tokenizer = roberta_letters()  # letters only: timing is the same
    text = {"vocab_size": len(tokenizer), **text}
    config = ClapConfig(
        text_config=ClapTextConfig(**text).to_dict(),
        audio_config=ClapAudioConfig(**audio).to_dict(),
        projection_dim=projection_dim,
    )
    ClapModel(config).save_pretrained(out)
    # RoBERTa's positions start after the padding index: the text tower reads 2 fewer tokens than it has positions
    tokenizer.model_max_length = config.text_config.max_position_embeddings - 2
    extractor = ClapFeatureExtractor(truncation="rand_trunc")
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(out)


def audiobox(out: str) -> None:
    from audiobox_aesthetics.model.aes import AXES_NAME, AesMultiOutput

    calibration = {axis: {"mean": 5.5, "std": 1.5} for axis in AXES_NAME}  # the heads' output scale
    AesMultiOutput(target_transform=calibration).save_pretrained(out)
