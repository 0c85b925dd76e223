"""Stand-ins for the 2026 transformers speech families. CSM (sesame/csm-1b): a Llama backbone and a depth
decoder over Mimi codes, with a Llama-3-style byte-level tokenizer whose special tokens (begin/end of text,
<|AUDIO|>, <|audio_eos|>) the config's token ids point at."""

from __future__ import annotations

from audionet.models.random_weights.tokenizers import byte_level_bpe

CSM_SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|AUDIO|>", "<|audio_eos|>"]


def random_codebooks(codec) -> None:
    """Random centroids for a codec's quantizer codebooks: transformers initialises them to zeros, which
    quantises every input to code 0, so a reference clip would change nothing."""
    import torch

    for module in codec.modules():
        if hasattr(module, "embed_sum") and hasattr(module, "cluster_usage"):
            with torch.no_grad():
                module.embed_sum.normal_()
                module.cluster_usage.fill_(1.0)
            module._embed = None


def csm(out: str, *, backbone: dict, depth: dict, codec: dict) -> None:
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
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out)
    extractor = EncodecFeatureExtractor(feature_size=1, sampling_rate=codec.get("sampling_rate", 24_000))
    CsmProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(out)
