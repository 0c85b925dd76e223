"""The config values of each random-weight stand-in's sizes (table.py says which builder takes them): `tiny`, a
few small layers of the same architecture; `full`, the published model's config values where they differ from
the config class's defaults.
"""

from __future__ import annotations


def musicgen_config(width: int, layers: int, heads: int) -> dict:
    codec = dict(sampling_rate=32_000, upsampling_ratios=[8, 5, 4, 4], target_bandwidths=[2.2], audio_channels=1)
    codec |= dict(normalize=False, use_causal_conv=False)
    return dict(
        text=dict(vocab_size=32_128, d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12),
        codec=codec | dict(num_filters=64, hidden_size=128, codebook_size=2048, codebook_dim=128, num_lstm_layers=2),
        decoder=dict(vocab_size=2048, hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads)
        | dict(ffn_dim=4 * width, num_codebooks=4, max_position_embeddings=2048),
    )


MUSICGEN_TINY = dict(
    text=dict(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
    codec=dict(sampling_rate=32_000, upsampling_ratios=[8, 5, 4, 4], target_bandwidths=[2.2], audio_channels=1)
    | dict(normalize=False, use_causal_conv=False, num_filters=4, hidden_size=16, codebook_size=64)
    | dict(codebook_dim=16, num_lstm_layers=1),
    decoder=dict(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64)
    | dict(num_codebooks=4, max_position_embeddings=2048),
)
VITS_TINY = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, ffn_dim=32, flow_size=16)
VITS_TINY |= dict(prior_encoder_num_flows=2, posterior_encoder_num_wavenet_layers=2, upsample_initial_channel=32)
VITS_TINY |= dict(upsample_rates=[8, 8, 2, 2], upsample_kernel_sizes=[16, 16, 4, 4], resblock_kernel_sizes=[3])
VITS_TINY |= dict(resblock_dilation_sizes=[[1, 3]], duration_predictor_filter_channels=16, depth_separable_num_layers=2)
# random durations make 79 characters last 19 s, past the validator's length bound (0.2 s a character + 1.5 s)
VITS_TINY |= dict(speaking_rate=2.5)
SPEECHT5_TINY = dict(
    model=dict(vocab_size=81, hidden_size=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2)
    | dict(decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, speech_decoder_prenet_units=32)
    | dict(speech_decoder_postnet_units=32, speech_decoder_postnet_layers=2, speaker_embedding_dim=16),
    vocoder=dict(upsample_initial_channel=32, resblock_kernel_sizes=[3], resblock_dilation_sizes=[[1, 3]])
    # the config's initializer_range (0.01) leaves the tiny HiFi-GAN's waveform near 1e-8, gated as silent
    | dict(initializer_range=0.15),
)
DAC_44K = dict(sampling_rate=44_100, hop_length=512, n_codebooks=9, codebook_size=1024)
DAC_44K |= dict(downsampling_ratios=[2, 4, 8, 8], upsampling_ratios=[8, 8, 4, 2])
_DIA_TINY_BLOCK = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
_DIA_TINY_BLOCK |= dict(num_key_value_heads=2, head_dim=16)
DIA_TINY = dict(
    codec=DAC_44K | dict(codebook_dim=4, encoder_hidden_size=4, decoder_hidden_size=16),
    encoder=_DIA_TINY_BLOCK,
    decoder=_DIA_TINY_BLOCK
    | dict(cross_num_attention_heads=2, cross_num_key_value_heads=2, cross_head_dim=16, cross_hidden_size=32)
    | dict(vocab_size=1024 + 4),
)
WHISPER_TINY = dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2)
WHISPER_TINY |= dict(decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128)


def whisper_large_config(decoder_layers: int) -> dict:
    return dict(d_model=1280, encoder_layers=32, decoder_layers=decoder_layers, encoder_attention_heads=20) | dict(
        decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120
    )


WAVLM_TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
WAVLM_TINY |= dict(conv_dim=(32, 32), conv_stride=(5, 4), conv_kernel=(10, 8), num_conv_pos_embeddings=16)
WAVLM_TINY |= dict(tdnn_dim=(32, 32), tdnn_kernel=(3, 1), tdnn_dilation=(1, 1), xvector_output_dim=24)
CLAP_TINY = dict(
    text=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    | dict(max_position_embeddings=80, projection_dim=16),
    audio=dict(patch_embeds_hidden_size=16, depths=[1, 1], num_attention_heads=[2, 2], hidden_size=32)
    | dict(projection_dim=16),
    projection_dim=16,
)
CLAP_FULL = dict(
    text=dict(vocab_size=50265),
    audio=dict(patch_embeds_hidden_size=128, depths=[2, 2, 12, 2], num_attention_heads=[4, 8, 16, 32])
    | dict(hidden_size=1024),
    projection_dim=512,
)

T5_BASE = dict(d_model=768, d_kv=64, d_ff=3072, num_layers=12, num_heads=12)
# stabilityai/stable-audio-open-1.0: diffusers' defaults are its config (DiT 24 layers x 24 heads, 1024-latent
# window = 47.5 s at 44.1 kHz; Oobleck VAE, hop 2048; T5-base; cosine DPM-Solver scheduler).
STABLE_AUDIO_FULL = dict(vae={}, text=T5_BASE, transformer={}, scheduler={})
# The tiny one keeps 1.0's window, 1024 latents at a 2048 hop (47.5 s at 44.1 kHz), so it answers every length a
# validator asks (4-10 s) as the real one does: a shorter window would refuse them.
STABLE_AUDIO_TINY = dict(
    vae=dict(encoder_hidden_size=4, downsampling_ratios=[8, 8, 8, 4], channel_multiples=[1, 2, 2, 2])
    | dict(decoder_channels=4, decoder_input_channels=8, audio_channels=2, sampling_rate=44_100),
    text=dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
    transformer=dict(sample_size=1024, in_channels=8, out_channels=8, num_layers=2, attention_head_dim=8)
    | dict(num_attention_heads=4, num_key_value_attention_heads=2, cross_attention_dim=32, time_proj_dim=16),
    scheduler={},
)
# ACE-Step 1.5 turbo (2B): diffusers' defaults for the DiT and condition encoder are its config (hidden 2048,
# 24 layers, 16 heads of 128, in_channels 192), guidance distilled (is_turbo); Qwen3-Embedding-0.6B text encoder;
# Oobleck VAE at 48 kHz with a 1920 hop (25 latents a second) at diffusers' default widths.
QWEN3_EMBEDDING_06B = dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16)
QWEN3_EMBEDDING_06B |= dict(num_key_value_heads=8, head_dim=128, max_position_embeddings=32_768)
ACE_STEP_FULL = dict(
    vae=dict(downsampling_ratios=[2, 4, 4, 6, 10], sampling_rate=48_000),
    text=QWEN3_EMBEDDING_06B,
    transformer=dict(is_turbo=True),
    condition={},
)
_ACE_TINY_BLOCK = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2)
_ACE_TINY_BLOCK |= dict(head_dim=8, rope_theta=10_000.0, sliding_window=16)
ACE_STEP_TINY = dict(
    vae=dict(encoder_hidden_size=4, downsampling_ratios=[8, 8, 30], channel_multiples=[1, 2, 2])
    | dict(decoder_channels=4, decoder_input_channels=8, audio_channels=2, sampling_rate=48_000),
    text=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
    | dict(num_key_value_heads=2, head_dim=8, max_position_embeddings=4096),
    transformer=_ACE_TINY_BLOCK | dict(num_hidden_layers=2, in_channels=24, audio_acoustic_hidden_dim=8, is_turbo=True),
    condition=_ACE_TINY_BLOCK
    | dict(timbre_hidden_dim=8, num_lyric_encoder_hidden_layers=2)
    | dict(num_timbre_encoder_hidden_layers=2),
)

# sesame/csm-1b: CsmConfig's defaults are its config (Llama backbone 2048 x 16 layers, depth decoder 1024 x 4,
# 32 Mimi codebooks); MimiConfig's defaults are kyutai/mimi (24 kHz, 12.5 frames a second). The code vocabulary is
# the codec's 2048 (csm-1b's has 3 more ids, which random weights would sample and a trained model never emits).
_CSM_CODES = dict(vocab_size=2048, codebook_pad_token_id=2047)
CSM_FULL = dict(backbone=dict(hidden_size=2048) | _CSM_CODES, depth=dict(vocab_size=2048), codec={})
_CSM_TINY_BLOCK = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
_CSM_TINY_BLOCK |= dict(num_key_value_heads=2, head_dim=8)
CSM_TINY = dict(
    backbone=_CSM_TINY_BLOCK | dict(num_codebooks=4, vocab_size=64, codebook_pad_token_id=63, text_vocab_size=300),
    depth=_CSM_TINY_BLOCK | dict(num_codebooks=4, vocab_size=64, max_position_embeddings=5),
    codec=dict(hidden_size=16, num_filters=4, codebook_size=64, codebook_dim=16, num_quantizers=4)
    | dict(vector_quantization_hidden_dimension=16, upsample_groups=16, num_hidden_layers=1, intermediate_size=32)
    | dict(num_attention_heads=2, num_key_value_heads=2, head_dim=8),
)

# vibevoice/VibeVoice-1.5B-hf: a Qwen2.5-1.5B LM (hidden 1536, 28 layers, 12 heads, 2 KV heads, tied embeddings);
# the acoustic tokenizer (hidden 64, hop 3200: 7.5 frames a second at 24 kHz), the semantic encoder (hidden 128) and
# the diffusion head (4 layers) at their config defaults.
_QWEN25_15B = dict(vocab_size=151_936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28)
_QWEN25_15B |= dict(num_attention_heads=12, num_key_value_heads=2, tie_word_embeddings=True)
VIBEVOICE_FULL = dict(text=_QWEN25_15B, codec={}, semantic=dict(hidden_size=128), head={})
_VIBEVOICE_TINY_CODEC = dict(hidden_size=8, num_filters=4, depths=[1] * 7)
VIBEVOICE_TINY = dict(
    text=dict(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
    | dict(num_key_value_heads=2, tie_word_embeddings=False),
    # the config's initializer_range (0.01) shrinks the signal at each of the decoder's convolutions: the tiny
    # decoder answered with a peak of 1.6e-8, which the validator gates as silent; 0.08 gives a peak near 0.3
    codec=_VIBEVOICE_TINY_CODEC | dict(initializer_range=0.08),
    semantic=_VIBEVOICE_TINY_CODEC,
    head=dict(num_hidden_layers=1, intermediate_size=64, frequency_embedding_size=32),
)

# Pocket TTS (PocketTTSConfig's docstring checkpoint: eustlb/pocket-tts) and Gradium Phonon (gradium/phonon-31m-en):
# `full` is transformers 5.23's config defaults, the backbone's, flow head's and codec's (PocketTTSAudioTokenizerConfig;
# for Phonon an assumption: its docstring names no codec checkpoint), with the configs' text vocabularies.
_POCKET_TINY_LATENT = dict(latent_dim=8)
POCKET_TINY = dict(
    model=dict(vocab_size=300, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    | _POCKET_TINY_LATENT,
    flow=dict(hidden_size=16, num_hidden_layers=1, frequency_embedding_size=16) | _POCKET_TINY_LATENT,
    codec=dict(hidden_size=16, num_filters=4, upsample_groups=16, num_hidden_layers=1, intermediate_size=32)
    | dict(num_attention_heads=2, num_key_value_heads=2)
    | _POCKET_TINY_LATENT,
)
PHONON_TINY = POCKET_TINY | dict(model=POCKET_TINY["model"] | dict(audio_prompt_dim=16))

_HUBERT_TINY = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
_HUBERT_TINY |= dict(conv_dim=[16] * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2)
# The tiny Mimi-style codecs of CSM, Pocket TTS and Phonon decode at full scale or beyond (the validator gates a
# clipped answer): their last convolution is scaled by this (speech_lm.output_gain).
GAIN = 0.05

# bosonai/higgs-audio-v2-generation-3B-base: `full` is HiggsAudioV2Config's defaults (a Llama LM 3072 x 28 layers, 8
# codebooks) and an audio tokenizer at 25 frames a second (a 960 hop at 24 kHz: 8 x 5 x 4 x 6) with 8 codebooks of
# 1024 (2 kbps) and HuBERT-base semantics, read from the library's docs, not from the checkpoint's config.json (not
# here). The tiny one keeps the hop and the frame rate with 4 codebooks of 64.
_HIGGS_HOP = dict(downsampling_ratios=[8, 5, 4, 6], upsampling_ratios=[6, 4, 5, 8])
HIGGS_FULL = dict(model={}, codec=dict(acoustic_model_config=_HIGGS_HOP, target_bandwidths=[0.5, 1.0, 1.5, 2.0]))
HIGGS_TINY = dict(
    model=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
    | dict(num_key_value_heads=2, head_dim=8, max_position_embeddings=4096),
    codec=dict(codebook_size=64, codebook_dim=8, target_bandwidths=[0.5, 0.6])
    | dict(acoustic_model_config=_HIGGS_HOP | dict(encoder_hidden_size=4, decoder_hidden_size=16, hidden_size=8))
    | dict(semantic_model_config=_HUBERT_TINY),
    gain=20.0,  # its DAC decoder (which ends on a tanh) is quiet at random, not loud: the gain raises it
)

# coqui/XTTS-v2: `full` is the GPT of its config.json as we recall it (30 layers x 1024, 16 heads, 1026 audio tokens with
# start 1024 and stop 1025, the perceiver resampler; its 6681-token vocabulary is the stand-in's characters here), not
# checked against the file (not here); the HiFi-GAN decoder and speaker encoder are fixed by the package.
_XTTS_AUDIO = dict(gpt_num_audio_tokens=1026, gpt_start_audio_token=1024, gpt_stop_audio_token=1025)
XTTS_FULL = dict(args=_XTTS_AUDIO | dict(gpt_use_perceiver_resampler=True))
XTTS_TINY = dict(
    args=dict(
        gpt_layers=2, gpt_n_model_channels=32, gpt_n_heads=2, decoder_input_dim=32, gpt_use_perceiver_resampler=True
    )
    | dict(gpt_num_audio_tokens=66, gpt_start_audio_token=64, gpt_stop_audio_token=65)
)

# k2-fsa/OmniVoice: `full` is a Qwen3-0.6B LM (its published size, 0.8 B in all, from its README as issue 47 quotes it;
# the LM values are Qwen3-0.6B's published config, not OmniVoice's config.json, which is not here) over Higgs Audio
# v2's tokenizer at `full`. The tiny one shares the tiny Higgs codec.
OMNIVOICE_FULL = dict(llm=QWEN3_EMBEDDING_06B | dict(tie_word_embeddings=True), codec=HIGGS_FULL["codec"])
OMNIVOICE_TINY = dict(
    llm=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)
    | dict(head_dim=8),
    codec=HIGGS_TINY["codec"],
    gain=HIGGS_TINY["gain"],
)

# Coqui's tts_models/en/ljspeech/vits: `full` is VitsArgs' defaults (its published config's sizes, as the package
# documents them); the tiny one a few narrow layers. Both on characters (see coqui.vits).
COQUI_VITS_TINY = dict(hidden_channels=16, hidden_channels_ffn_text_encoder=32, num_heads_text_encoder=2)
COQUI_VITS_TINY |= dict(num_layers_text_encoder=2, num_layers_flow=2, num_layers_posterior_encoder=2)
COQUI_VITS_TINY |= dict(resblock_kernel_sizes_decoder=[3], resblock_dilation_sizes_decoder=[[1, 3, 5]])
COQUI_VITS_TINY |= dict(upsample_initial_channel_decoder=32)  # gain 100: the tiny decoder's peak was 1e-3 (silent)

# SWivid/F5-TTS (F5TTS_v1_Base): `full` is the package's own F5TTS_v1_Base.yaml (DiT 1024 x 22 layers, 16 heads) and
# charactr/vocos-mel-24khz's sizes (512 wide, 8 layers); the tiny one a 2-layer DiT 32 wide and a 2-layer Vocos.
F5_FULL = dict(arch={}, vocos=dict(dim=512, layers=8))
F5_TINY = dict(arch=dict(dim=32, depth=2, heads=2, text_dim=16, conv_layers=1), vocos=dict(dim=32, layers=2))

# openbmb/VoxCPM2: `full` is its config.json as public code that loads it quotes it (not here: a MiniCPM-4 LM 2048 x 28
# layers, 16 heads over 2 KV heads, 73,448 tokens; residual LM 8 layers; encoder and DiT 1024 x 12; AudioVAE V2 at the
# package's defaults) with the stand-in's 259-token vocabulary; the tiny one two 32-wide layers and a narrow VAE.
_VOX_BLOCK = dict(hidden_dim=1024, ffn_dim=4096, num_heads=16, num_layers=12, kv_channels=128)
VOXCPM2_FULL = dict(
    lm=dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=28, num_attention_heads=16, kv_channels=128)
    | dict(num_key_value_heads=2, use_mup=False, scale_emb=12, dim_model_base=256, scale_depth=1.4),
    model=dict(residual_lm_no_rope=True, encoder_config=_VOX_BLOCK, dit_config=_VOX_BLOCK | dict(cfm_config={})),
    vae={},
)
_VOX_TINY_BLOCK = dict(hidden_dim=32, ffn_dim=64, num_heads=4, num_layers=1, kv_channels=8)
VOXCPM2_TINY = dict(
    lm=VOXCPM2_FULL["lm"]
    | dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
    | dict(kv_channels=8),
    model=dict(feat_dim=16, residual_lm_num_layers=1, residual_lm_no_rope=True, scalar_quantization_latent_dim=16)
    | dict(encoder_config=_VOX_TINY_BLOCK, dit_config=_VOX_TINY_BLOCK | dict(cfm_config={}), max_length=1024),
    vae=dict(encoder_dim=8, latent_dim=16, decoder_dim=128),  # 128 / 2**6: the decoder's six stages halve it
)
