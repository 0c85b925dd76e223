"""Stand-in for Higgs Audio v2 (bosonai/higgs-audio-v2-generation-3B-base, transformers `higgs_audio_v2`): the Llama
LM with its audio embeddings and audio head over `num_codebooks` delayed codebooks, and the processor's audio
tokenizer (`HiggsAudioV2TokenizerModel`: a DAC acoustic model and a HuBERT semantic model), all built from config,
with a Llama-3-style byte-level tokenizer whose special tokens the config's ids and the processor point at. The chat
template is ours, written to the layout of the checkpoint's (system turn, user text turns, assistant audio turns as
`<|audio_out_bos|><|AUDIO_OUT|><|audio_eos|>`, the generation prompt ending on `<|audio_out_bos|>`)."""

from __future__ import annotations

import os

from audionet.models.random_weights.speech_lm import output_gain, random_codebooks
from audionet.models.random_weights.tokenizers import byte_level_bpe

SPECIALS = {
    "bos": "<|begin_of_text|>",
    "pad": "<|end_of_text|>",
    "eos": "<|eot_id|>",
    "header_start": "<|start_header_id|>",
    "header_end": "<|end_header_id|>",
    "audio_bos": "<|audio_out_bos|>",
    "audio": "<|AUDIO_OUT|>",
    "audio_eos": "<|audio_eos|>",
    "audio_delay": "<|reserved_special_token_6|>",
}
TEMPLATE = (
    "{{- bos_token -}}"
    "{%- for m in messages -%}<|start_header_id|>{{ m['role'] + '<|end_header_id|>\\n\\n' }}"
    "{%- for item in m['content'] -%}"
    "{%- if item['type'] == 'audio' -%}<|audio_out_bos|><|AUDIO_OUT|><|audio_eos|>"
    "{%- else -%}{{ item['text'] | trim }}{%- endif -%}"
    "{%- endfor -%}<|eot_id|>{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|start_header_id|>assistant<|end_header_id|>\n\n<|audio_out_bos|>{%- endif -%}"
)
CODEC_DIR = "audio_tokenizer"


def audio_tokenizer(codec: dict, gain: float):
    """Higgs Audio v2's tokenizer (DAC + HuBERT) from config, with random codebooks and its decoder's `gain`."""
    from transformers import HiggsAudioV2TokenizerConfig, HiggsAudioV2TokenizerModel

    model = HiggsAudioV2TokenizerModel(HiggsAudioV2TokenizerConfig(**codec))
    random_codebooks(model)
    output_gain(model.acoustic_decoder.conv2, gain)  # before the DAC decoder's tanh
    return model


def higgs_audio_v2(out: str, *, model: dict, codec: dict, gain: float = 1.0) -> None:
    """The stand-in's audio head never samples the end of a stream (the rows of the stream ids are zero, the rest
    scaled far above them), as random CSM and Dia never stop: its length is the frames it is given. The processor
    names its codec by path, so the codec is saved in `out/audio_tokenizer` and named by that absolute path."""
    import torch
    from transformers import (
        DacFeatureExtractor,
        HiggsAudioV2Config,
        HiggsAudioV2ForConditionalGeneration,
        HiggsAudioV2Processor,
    )

    tokenizer = byte_level_bpe(
        list(SPECIALS.values()), bos_token=SPECIALS["bos"], eos_token=SPECIALS["eos"], pad_token=SPECIALS["pad"]
    )
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in SPECIALS.items()}
    codec_model = audio_tokenizer(codec, gain)
    codes = int(codec_model.config.codebook_size)
    config = HiggsAudioV2Config(
        **({"vocab_size": len(tokenizer)} | model),
        num_codebooks=codec_model.config.num_quantizers,
        codebook_size=codes + 2,  # the codec's codes, then the stream's BOS and EOS
        audio_stream_bos_id=codes,
        audio_stream_eos_id=codes + 1,
        bos_token_id=ids["bos"],
        pad_token_id=ids["pad"],
        eos_token_id=ids["eos"],
        audio_token_id=ids["audio"],
        audio_bos_token_id=ids["audio_bos"],
        audio_delay_token_id=ids["audio_delay"],
    )
    lm = HiggsAudioV2ForConditionalGeneration(config)
    with torch.no_grad():
        head = lm.audio_lm_head.weight.view(config.num_codebooks, config.codebook_size, -1)
        head.mul_(60.0)
        head[:, codes:].zero_()
    lm.generation_config.pad_token_id = ids["pad"]
    lm.save_pretrained(out)
    codec_model.save_pretrained(os.path.join(out, CODEC_DIR))
    codec_model.name_or_path = os.path.abspath(os.path.join(out, CODEC_DIR))
    HiggsAudioV2Processor(
        feature_extractor=DacFeatureExtractor(sampling_rate=int(codec_model.config.sample_rate)),
        tokenizer=tokenizer,
        audio_tokenizer=codec_model,
        chat_template=TEMPLATE,
        audio_stream_bos_id=codes,
        audio_stream_eos_id=codes + 1,
    ).save_pretrained(out)
