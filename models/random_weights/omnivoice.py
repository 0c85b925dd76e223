"""Stand-in for OmniVoice (k2-fsa/OmniVoice), built from the omnivoice package's own `OmniVoiceConfig` (a Qwen3 LM
config inside) and saved in its layout: the model and a byte-level tokenizer with the special tokens its prompt uses
in the folder, Higgs Audio v2's tokenizer (the Higgs stand-in's codec, `higgs.audio_tokenizer`) and its feature
extractor in `audio_tokenizer/`, where `OmniVoice.from_pretrained` looks first."""

from __future__ import annotations

import os

from audionet.models.random_weights.higgs import audio_tokenizer
from audionet.models.random_weights.tokenizers import byte_level_bpe

SPECIALS = ["<|endoftext|>", "<|denoise|>", "<|lang_start|>", "<|lang_end|>", "<|instruct_start|>", "<|instruct_end|>"]
SPECIALS += ["<|text_start|>", "<|text_end|>"]


def omnivoice(out: str, *, llm: dict, codec: dict, gain: float = 1.0) -> None:
    from omnivoice import OmniVoice, OmniVoiceConfig
    from transformers import DacFeatureExtractor

    tokenizer = byte_level_bpe(SPECIALS, pad_token="<|endoftext|>", eos_token="<|endoftext|>")
    codec_model = audio_tokenizer(codec, gain)
    codebooks, codes = codec_model.config.num_quantizers, codec_model.config.codebook_size
    config = OmniVoiceConfig(
        audio_vocab_size=codes + 1,  # the codec's codes, then the mask
        audio_mask_id=codes,
        num_audio_codebook=codebooks,
        audio_codebook_weights=[1.0] * codebooks,
        llm_config=dict(model_type="qwen3", vocab_size=len(tokenizer)) | llm,
    )
    OmniVoice(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    codec_model.save_pretrained(os.path.join(out, "audio_tokenizer"))
    DacFeatureExtractor(sampling_rate=int(codec_model.config.sample_rate)).save_pretrained(
        os.path.join(out, "audio_tokenizer")
    )
