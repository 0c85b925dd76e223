"""Stand-ins for the 2026 transformers speech families. CSM (sesame/csm-1b): a Llama backbone and a depth
decoder over Mimi codes, with a Llama-3-style byte-level tokenizer whose special tokens (begin/end of text,
<|AUDIO|>, <|audio_eos|>) the config's token ids point at. VibeVoice: a Qwen2 LM, a diffusion head, the acoustic
tokenizer (a sigma-VAE) and the semantic encoder, all built from config, with a Qwen2-style byte-level tokenizer.
Pocket TTS and Gradium Phonon: the backbone, flow head and end-of-speech head, and the processor's codec (a
`PocketTTSAudioTokenizerModel`), with a byte-level tokenizer whose named tokens the processor reads."""

from __future__ import annotations

from audionet.models.random_weights.tokenizers import byte_level_bpe

CSM_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|AUDIO|>", "<|audio_eos|>"]


def output_gain(conv, gain: float) -> None:
    """Scale a decoder's last convolution, and so its waveform, by `gain`: a random-weight codec decodes at full
    scale or beyond (clipped, which the validator gates); the table's tiny sizes bring it to a speech-like level."""
    import torch

    with torch.no_grad():
        conv.weight.mul_(gain)
        if conv.bias is not None:
            conv.bias.mul_(gain)


def random_codebooks(codec) -> None:
    """Random centroids for a codec's quantizer codebooks: transformers initialises them to zeros, which
    quantises every input to code 0, so a reference clip would change nothing."""
    import torch

    for module in codec.modules():
        if hasattr(module, "embed_sum") and hasattr(module, "cluster_usage"):  # Mimi's
            with torch.no_grad():
                module.embed_sum.normal_()
                module.cluster_usage.fill_(1.0)
            module._embed = None
        elif hasattr(module, "embed") and hasattr(module, "embed_avg"):  # Higgs Audio v2's tokenizer's
            with torch.no_grad():
                module.embed.normal_()
                module.embed_avg.copy_(module.embed)


def csm(out: str, *, backbone: dict, depth: dict, codec: dict, gain: float = 1.0) -> None:
    from transformers import (
        CsmConfig,
        CsmDepthDecoderConfig,
        CsmForConditionalGeneration,
        CsmProcessor,
        EncodecFeatureExtractor,
        MimiConfig,
    )

    tokenizer = byte_level_bpe(
        CSM_SPECIALS, bos_token="<|begin_of_text|>", eos_token="<|end_of_text|>", pad_token="<|AUDIO|>"
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in CSM_SPECIALS}
    config = CsmConfig(
        **backbone,
        depth_decoder_config=CsmDepthDecoderConfig(**depth, backbone_hidden_size=backbone["hidden_size"]).to_dict(),
        codec_config=MimiConfig(**codec).to_dict(),
        bos_token_id=ids["<|begin_of_text|>"],
        pad_token_id=ids["<|AUDIO|>"],
        audio_token_id=ids["<|AUDIO|>"],
        audio_eos_token_id=ids["<|audio_eos|>"],
    )
    model = CsmForConditionalGeneration(config)
    random_codebooks(model.codec_model)
    output_gain(model.codec_model.decoder.decoder_seanet.layers[-1].conv, gain)
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out)
    extractor = EncodecFeatureExtractor(feature_size=1, sampling_rate=codec.get("sampling_rate", 24_000))
    CsmProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(out)


# VibeVoice: Qwen2's special tokens as the checkpoint uses them. The stand-in's LM head is zero, so every logit ties
# and the constrained argmax picks the lowest allowed id: <|vision_pad|> comes first, and the stand-in always asks for
# one more acoustic frame (as random CSM and Dia never stop), which makes its length the frames it is given.
VIBEVOICE_SPECIALS = ["<|vision_pad|>", "<|endoftext|>", "<|vision_start|>", "<|vision_end|>"]
# The prompt layout of the VibeVoice-1.5B-hf chat template (a system line, each voice under "Voice input", each
# speaker's text under "Text input", then the audio start token), written here for the stand-in.
VIBEVOICE_TEMPLATE = (
    "{{- ' Transform the text provided by various speakers into speech output, utilizing the distinct voice of each "
    "respective speaker.\\n' -}}"
    "{%- set ns = namespace(voiced=',') -%}"
    "{%- for m in messages -%}{%- if m['content'] | selectattr('type', 'equalto', 'audio') | list "
    "and (',' ~ m['role'] ~ ',') not in ns.voiced -%}{%- set ns.voiced = ns.voiced ~ m['role'] ~ ',' -%}"
    "{%- endif -%}{%- endfor -%}"
    "{%- if ns.voiced != ',' -%}{{ ' Voice input:\\n' }}{%- for role in ns.voiced.strip(',').split(',') -%}"
    "{{ ' Speaker ' ~ role ~ ':<|vision_start|><|vision_pad|><|vision_end|>\\n' }}{%- endfor -%}{%- endif -%}"
    "{{ ' Text input:\\n' }}"
    "{%- for m in messages -%}{%- for item in m['content'] if item['type'] == 'text' -%}"
    "{{ ' Speaker ' ~ m['role'] ~ ': ' ~ item['text'] ~ '\\n' }}{%- endfor -%}{%- endfor -%}"
    "{{ ' Speech output:\\n<|vision_start|>' }}"
)


def vibevoice(out: str, *, text: dict, codec: dict, semantic: dict, head: dict) -> None:
    import torch
    from transformers import VibeVoiceConfig, VibeVoiceForConditionalGeneration, VibeVoiceProcessor
    from transformers.models.vibevoice_acoustic_tokenizer import VibeVoiceAcousticTokenizerFeatureExtractor

    tokenizer = byte_level_bpe(VIBEVOICE_SPECIALS, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in VIBEVOICE_SPECIALS}
    config = VibeVoiceConfig(
        text_config=dict(model_type="qwen2", **text),
        audio_config=dict(model_type="vibevoice_acoustic_tokenizer", **codec),
        semantic_model_config=dict(model_type="vibevoice_acoustic_tokenizer_encoder", **semantic),
        diffusion_head_config=head,
        pad_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        audio_token_id=ids["<|vision_pad|>"],
        audio_bos_token_id=ids["<|vision_start|>"],
        audio_eos_token_id=ids["<|vision_end|>"],
    )
    model = VibeVoiceForConditionalGeneration(config)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    model.save_pretrained(out)
    extractor = VibeVoiceAcousticTokenizerFeatureExtractor(pad_to_multiple_of=config.audio_config.hop_length)
    VibeVoiceProcessor(
        feature_extractor=extractor, tokenizer=tokenizer, chat_template=VIBEVOICE_TEMPLATE
    ).save_pretrained(out)


# Pocket TTS / Gradium Phonon: the named tokens PocketTTSProcessor reads from the tokenizer (Gradium has no voice BOS);
# the configs' token ids point at them. The chat template is ours, written to the layout the processor documents (voice
# BOS, voice, text, audio BOS; Gradium's without the voice BOS): the checkpoints' own templates are not here to copy.
POCKET_TOKENS = {
    "audio_prompt_bos_token": "<|audio_prompt_bos|>",
    "audio_prompt_token": "<|audio_prompt|>",
    "audio_latent_token": "<|audio_latent|>",
    "audio_bos_token": "<|audio_bos|>",
}
POCKET_TEMPLATE = (
    "{%- for m in messages -%}{%- for item in m['content'] -%}"
    "{%- if item['type'] == 'audio' -%}<|audio_prompt_bos|><|audio_prompt|>"
    "{%- else -%}{{ item['text'] }}{%- endif -%}{%- endfor -%}{%- endfor -%}<|audio_bos|>"
)
CODEC_DIR = "audio_tokenizer"


def pocket_tts(out: str, *, model: dict, flow: dict, codec: dict, gain: float = 1.0, phonon: bool = False) -> None:
    """Pocket TTS, or Gradium Phonon (`phonon`). The stand-in's end-of-speech head never fires (zero weights, a
    large negative bias), as random CSM and Dia never stop: its length is the frames it is given. The processor
    config names its codec by path, so the codec is saved in `out/audio_tokenizer` and named by that absolute path."""
    import os

    import torch
    import transformers
    from transformers import PocketTTSAudioTokenizerConfig, PocketTTSFeatureExtractor, PocketTTSProcessor

    names = {k: v for k, v in POCKET_TOKENS.items() if not (phonon and k == "audio_prompt_bos_token")}
    tokenizer = byte_level_bpe(["<pad>", *names.values()], pad_token="<pad>", extra_special_tokens=names)
    ids = {key.replace("_token", "_token_id"): tokenizer.convert_tokens_to_ids(tok) for key, tok in names.items()}
    prefix = "GradiumPhononTTS" if phonon else "PocketTTS"
    config = getattr(transformers, f"{prefix}Config")(
        **({"vocab_size": len(tokenizer)} | model),
        flow_head_config=flow | dict(condition_dim=model.get("hidden_size", 768 if phonon else 1024)),
        pad_token_id=tokenizer.pad_token_id,
        **ids,
    )
    lm = getattr(transformers, f"{prefix}ForConditionalGeneration")(config)
    with torch.no_grad():
        lm.eos_head.weight.zero_()
        lm.eos_head.bias.fill_(-100.0)
    lm.save_pretrained(out)
    audio_tokenizer = transformers.PocketTTSAudioTokenizerModel(PocketTTSAudioTokenizerConfig(**codec))
    output_gain(audio_tokenizer.decoder.decoder_seanet.layers[-1].conv, gain)
    audio_tokenizer.save_pretrained(os.path.join(out, CODEC_DIR))
    audio_tokenizer.name_or_path = os.path.abspath(os.path.join(out, CODEC_DIR))
    frame_size = audio_tokenizer.config.frame_size
    PocketTTSProcessor(
        feature_extractor=PocketTTSFeatureExtractor(frame_size=frame_size, pad_to_multiple_of=frame_size),
        tokenizer=tokenizer,
        audio_tokenizer=audio_tokenizer,
        chat_template=POCKET_TEMPLATE.replace("<|audio_prompt_bos|>", "") if phonon else POCKET_TEMPLATE,
    ).save_pretrained(out)


def phonon(out: str, **sizes) -> None:
    pocket_tts(out, **sizes, phonon=True)
