"""Stand-ins for the transformers generation models served before 2026: MusicGen, VITS/MMS, SpeechT5 +
HiFi-GAN, Dia. Each builder takes its config values from the table (table.py) and writes a model
directory that `hf:<dir>` loads through the same code path as the published checkpoint."""

from __future__ import annotations

import json
import os

from audionet.models.random_weights.speech_lm import output_gain
from audionet.models.random_weights.tokenizers import sentencepiece_model, t5_unigram

VITS_SYMBOLS = list("k'zyudhesw–3cp-1jmi flo0bra42n_xvtq56g")


def musicgen(out: str, *, text: dict, codec: dict, decoder: dict) -> None:
    from transformers import (
        EncodecConfig,
        EncodecFeatureExtractor,
        MusicgenConfig,
        MusicgenDecoderConfig,
        MusicgenForConditionalGeneration,
        MusicgenProcessor,
        T5Config,
    )

    pad = decoder["vocab_size"]  # MusicGen's pad/start token is one past the codebook
    decoder = MusicgenDecoderConfig(**decoder, pad_token_id=pad, bos_token_id=pad)
    config = MusicgenConfig(
        text_encoder=T5Config(**text).to_dict(),
        audio_encoder=EncodecConfig(**codec).to_dict(),
        decoder=decoder.to_dict(),
    )
    model = MusicgenForConditionalGeneration(config)
    model.generation_config.pad_token_id = model.generation_config.decoder_start_token_id = pad
    model.config.decoder_start_token_id = model.config.pad_token_id = pad
    model.save_pretrained(out)
    extractor = EncodecFeatureExtractor(feature_size=1, sampling_rate=codec["sampling_rate"])
    MusicgenProcessor(extractor, t5_unigram()).save_pretrained(out)


def vits(out: str, *, config: dict, gain: float = 1.0) -> None:
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    os.makedirs(out, exist_ok=True)
    vocab_path = os.path.join(out, "vocab.json")
    with open(vocab_path, "w") as handle:
        json.dump({s: i for i, s in enumerate(VITS_SYMBOLS)}, handle)
    model = VitsModel(VitsConfig(vocab_size=len(VITS_SYMBOLS), **config))
    output_gain(model.decoder.conv_post, gain)  # before its tanh: at 1.0 the tiny one saturates (clipped)
    model.save_pretrained(out)
    VitsTokenizer(
        vocab_file=vocab_path, add_blank=True, normalize=True, phonemize=False, is_uroman=False
    ).save_pretrained(out)


def speecht5(out: str, *, model: dict, vocoder: dict) -> None:
    import torch
    from transformers import (
        SpeechT5Config,
        SpeechT5ForTextToSpeech,
        SpeechT5HifiGan,
        SpeechT5HifiGanConfig,
        SpeechT5Tokenizer,
    )

    os.makedirs(out, exist_ok=True)
    spm_path = os.path.join(out, "local.spm")
    sentencepiece_model(spm_path)
    tts = SpeechT5ForTextToSpeech(SpeechT5Config(**model))
    with torch.no_grad():  # the stop head never fires (random ones stop at once): the length is the backend's bound
        tts.speech_decoder_postnet.prob_out.weight.zero_()
        tts.speech_decoder_postnet.prob_out.bias.fill_(-100.0)
    tts.save_pretrained(out)
    SpeechT5Tokenizer(vocab_file=spm_path).save_pretrained(out)
    SpeechT5HifiGan(SpeechT5HifiGanConfig(**vocoder)).save_pretrained(os.path.join(out, "vocoder"))


def dia(out: str, *, codec: dict, encoder: dict | None = None, decoder: dict | None = None) -> None:
    """`encoder`/`decoder` None: DiaConfig's defaults (the published Dia-1.6B)."""
    from transformers import (
        DacConfig,
        DacModel,
        DiaConfig,
        DiaDecoderConfig,
        DiaEncoderConfig,
        DiaFeatureExtractor,
        DiaForConditionalGeneration,
        DiaProcessor,
        DiaTokenizer,
    )

    codec_dir = os.path.join(out, "dac")
    DacModel(DacConfig(**codec)).save_pretrained(codec_dir)
    parts = {}
    if encoder is not None:
        parts["encoder_config"] = DiaEncoderConfig(**encoder)
    if decoder is not None:
        parts["decoder_config"] = DiaDecoderConfig(**decoder)
    DiaForConditionalGeneration(DiaConfig(**parts)).save_pretrained(out)
    extractor = DiaFeatureExtractor(sampling_rate=codec["sampling_rate"], hop_length=codec["hop_length"])
    DiaProcessor(extractor, DiaTokenizer(), DacModel.from_pretrained(codec_dir)).save_pretrained(out)
