"""Random-weight stand-ins for generation models whose weights cannot be fetched here.

`random_spec("hf:facebook/musicgen-small", cache_dir)` builds the same
architecture from a config written in code (size="full": the published
model's config values; size="tiny": a few-layer model for tests), with random
weights and a tokenizer/processor made from local data only, saves it with
`save_pretrained` under `cache_dir`, and returns `hf:<that dir>`. Output is
noise; timings are real. Tests and benchmarks both use it.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Callable

SIZES = ("full", "tiny")
_WORDS = [
    "a",
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "it",
    "that",
    "with",
    "for",
    "on",
    "as",
    "was",
    "at",
    "by",
    "this",
    "be",
    "are",
    "from",
    "music",
    "beat",
    "drum",
    "piano",
    "guitar",
    "calm",
    "fast",
    "slow",
    "happy",
    "sad",
    "loud",
    "soft",
    "jazz",
    "rock",
    "pop",
    "ambient",
    "warm",
    "up",
    "hello",
    "world",
    "speech",
    "voice",
]


def _t5_tokenizer():
    """A unigram T5 tokenizer from an in-code vocabulary (never from the hub)."""
    from transformers import T5Tokenizer

    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    pieces += [("\u2581" + w, -2.0) for w in _WORDS] + [("\u2581", -3.0)]
    pieces += [(c, -5.0) for c in string.ascii_letters + string.digits + string.punctuation]
    return T5Tokenizer(vocab=pieces, extra_ids=0)


def _musicgen(size: str, variant: str, out: str) -> None:
    from transformers import (
        EncodecConfig,
        EncodecFeatureExtractor,
        MusicgenConfig,
        MusicgenDecoderConfig,
        MusicgenForConditionalGeneration,
        MusicgenProcessor,
        T5Config,
    )

    if size == "tiny":
        text = T5Config(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)
        codec = EncodecConfig(
            sampling_rate=32_000,
            upsampling_ratios=[8, 5, 4, 4],
            num_filters=4,
            hidden_size=16,
            codebook_size=64,
            codebook_dim=16,
            num_lstm_layers=1,
            target_bandwidths=[2.2],
            audio_channels=1,
            normalize=False,
            use_causal_conv=False,
        )
        decoder = MusicgenDecoderConfig(
            vocab_size=64,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            ffn_dim=64,
            num_codebooks=4,
            max_position_embeddings=2048,
            pad_token_id=64,
            bos_token_id=64,
        )
    else:
        width = {"small": (1024, 24, 16), "medium": (1536, 48, 24), "large": (2048, 48, 32)}[variant]
        text = T5Config(vocab_size=32_128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12)
        codec = EncodecConfig(
            sampling_rate=32_000,
            upsampling_ratios=[8, 5, 4, 4],
            num_filters=64,
            hidden_size=128,
            codebook_size=2048,
            codebook_dim=128,
            num_lstm_layers=2,
            target_bandwidths=[2.2],
            audio_channels=1,
            normalize=False,
            use_causal_conv=False,
        )
        decoder = MusicgenDecoderConfig(
            vocab_size=2048,
            hidden_size=width[0],
            num_hidden_layers=width[1],
            num_attention_heads=width[2],
            ffn_dim=4 * width[0],
            num_codebooks=4,
            max_position_embeddings=2048,
            pad_token_id=2048,
            bos_token_id=2048,
        )
    config = MusicgenConfig(text_encoder=text.to_dict(), audio_encoder=codec.to_dict(), decoder=decoder.to_dict())
    model = MusicgenForConditionalGeneration(config)
    pad = decoder.vocab_size  # MusicGen's pad/start token is one past the codebook
    model.generation_config.pad_token_id = model.generation_config.decoder_start_token_id = pad
    model.config.decoder_start_token_id = model.config.pad_token_id = pad
    model.save_pretrained(out)
    MusicgenProcessor(EncodecFeatureExtractor(feature_size=1, sampling_rate=32_000), _t5_tokenizer()).save_pretrained(
        out
    )


def _vits(size: str, variant: str, out: str) -> None:
    from transformers import VitsConfig, VitsModel, VitsTokenizer

    symbols = [
        "k",
        "'",
        "z",
        "y",
        "u",
        "d",
        "h",
        "e",
        "s",
        "w",
        "–",
        "3",
        "c",
        "p",
        "-",
        "1",
        "j",
        "m",
        "i",
        " ",
        "f",
        "l",
        "o",
        "0",
        "b",
        "r",
        "a",
        "4",
        "2",
        "n",
        "_",
        "x",
        "v",
        "t",
        "q",
        "5",
        "6",
        "g",
    ]
    vocab_path = os.path.join(out, "vocab.json")
    os.makedirs(out, exist_ok=True)
    with open(vocab_path, "w") as handle:
        json.dump({s: i for i, s in enumerate(symbols)}, handle)
    if size == "tiny":
        config = VitsConfig(
            vocab_size=len(symbols),
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            ffn_dim=32,
            flow_size=16,
            prior_encoder_num_flows=2,
            posterior_encoder_num_wavenet_layers=2,
            upsample_initial_channel=32,
            upsample_rates=[8, 8, 2, 2],
            upsample_kernel_sizes=[16, 16, 4, 4],
            resblock_kernel_sizes=[3],
            resblock_dilation_sizes=[[1, 3]],
            duration_predictor_filter_channels=16,
            depth_separable_num_layers=2,
        )
    else:  # facebook/mms-tts-eng: the VitsConfig defaults
        config = VitsConfig(vocab_size=len(symbols))
    VitsModel(config).save_pretrained(out)
    VitsTokenizer(
        vocab_file=vocab_path, add_blank=True, normalize=True, phonemize=False, is_uroman=False
    ).save_pretrained(out)


def _sentencepiece_model(path: str) -> None:
    import io

    import sentencepiece as spm

    text = " ".join(_WORDS) + " " + string.ascii_lowercase
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([text] * 20),
        model_writer=model,
        vocab_size=60,
        model_type="char",
        character_coverage=1.0,
        minloglevel=2,
    )
    with open(path, "wb") as handle:
        handle.write(model.getvalue())


def _speecht5(size: str, variant: str, out: str) -> None:
    from transformers import (
        SpeechT5Config,
        SpeechT5ForTextToSpeech,
        SpeechT5HifiGan,
        SpeechT5HifiGanConfig,
        SpeechT5Tokenizer,
    )

    os.makedirs(out, exist_ok=True)
    spm_path = os.path.join(out, "local.spm")
    _sentencepiece_model(spm_path)
    if size == "tiny":
        config = SpeechT5Config(
            vocab_size=81,
            hidden_size=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            speech_decoder_prenet_units=32,
            speech_decoder_postnet_units=32,
            speech_decoder_postnet_layers=2,
            speaker_embedding_dim=16,
        )
        vocoder = SpeechT5HifiGanConfig(
            upsample_initial_channel=32, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]]
        )
    else:  # microsoft/speecht5_tts + microsoft/speecht5_hifigan: the config defaults
        config, vocoder = SpeechT5Config(), SpeechT5HifiGanConfig()
    SpeechT5ForTextToSpeech(config).save_pretrained(out)
    SpeechT5Tokenizer(vocab_file=spm_path).save_pretrained(out)
    SpeechT5HifiGan(vocoder).save_pretrained(os.path.join(out, "vocoder"))


def _dia(size: str, variant: str, out: str) -> None:
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
    if size == "tiny":
        codec = DacConfig(
            sampling_rate=44_100,
            hop_length=512,
            n_codebooks=9,
            codebook_size=1024,
            codebook_dim=4,
            encoder_hidden_size=4,
            decoder_hidden_size=16,
            downsampling_ratios=[2, 4, 8, 8],
            upsampling_ratios=[8, 8, 4, 2],
        )
        config = DiaConfig(
            encoder_config=DiaEncoderConfig(
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=2,
                head_dim=16,
            ),
            decoder_config=DiaDecoderConfig(
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=2,
                head_dim=16,
                cross_num_attention_heads=2,
                cross_num_key_value_heads=2,
                cross_head_dim=16,
                cross_hidden_size=32,
                vocab_size=1024 + 4,
            ),
        )
    else:  # nari-labs/Dia-1.6B-0626 + descript/dac_44khz
        codec = DacConfig(
            sampling_rate=44_100,
            hop_length=512,
            n_codebooks=9,
            codebook_size=1024,
            encoder_hidden_size=64,
            decoder_hidden_size=1536,
            downsampling_ratios=[2, 4, 8, 8],
            upsampling_ratios=[8, 8, 4, 2],
        )
        config = DiaConfig()
    DacModel(codec).save_pretrained(codec_dir)
    DiaForConditionalGeneration(config).save_pretrained(out)
    DiaProcessor(
        DiaFeatureExtractor(sampling_rate=44_100, hop_length=512), DiaTokenizer(), DacModel.from_pretrained(codec_dir)
    ).save_pretrained(out)


BUILDERS: dict[str, tuple[Callable[[str, str, str], None], str]] = {
    "facebook/musicgen-small": (_musicgen, "small"),
    "facebook/musicgen-medium": (_musicgen, "medium"),
    "facebook/musicgen-large": (_musicgen, "large"),
    "facebook/mms-tts-eng": (_vits, "eng"),
    "microsoft/speecht5_tts": (_speecht5, "tts"),
    "nari-labs/Dia-1.6B-0626": (_dia, "1.6b"),
}


def random_spec(spec: str, cache_dir: str, *, size: str = "full") -> str:
    """`hf:<known id>` -> `hf:<dir with a random-weight model of that architecture>`;
    any other spec is returned unchanged."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}")
    scheme, _, name = spec.partition(":")
    if scheme != "hf" or name not in BUILDERS:
        return spec
    build, variant = BUILDERS[name]
    out = os.path.join(cache_dir, f"{name.replace('/', '--')}-random-{size}")
    marker = os.path.join(out, ".complete")
    if not os.path.exists(marker):
        import torch

        torch.manual_seed(0)
        build(size, variant, out)
        open(marker, "w").close()
    return f"hf:{out}"
