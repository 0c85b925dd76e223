"""Stand-ins for the diffusers music pipelines: Stable Audio Open 1.0 and ACE-Step 1.5. Each builds the
pipeline's components from the table's config values, assembles the pipeline and `save_pretrained`s it,
so `hf:<dir>` routes on its model_index.json exactly as the published repository does."""

from __future__ import annotations

from audionet.models.random_weights.tokenizers import byte_level_bpe, t5_unigram


def stable_audio(out: str, *, vae: dict, text: dict, transformer: dict, scheduler: dict) -> None:
    from diffusers import (
        AutoencoderOobleck,
        CosineDPMSolverMultistepScheduler,
        StableAudioDiTModel,
        StableAudioPipeline,
    )
    from diffusers.pipelines.stable_audio import StableAudioProjectionModel
    from transformers import T5Config, T5EncoderModel

    tokenizer = t5_unigram()
    tokenizer.model_max_length = 128  # t5-base's; the prompt is padded to it
    text = T5EncoderModel(T5Config(vocab_size=len(tokenizer), **text))
    width = text.config.d_model
    dit = StableAudioDiTModel(**transformer, cross_attention_input_dim=width, global_states_input_dim=2 * width)
    pipeline = StableAudioPipeline(
        vae=AutoencoderOobleck(**vae),
        text_encoder=text,
        projection_model=StableAudioProjectionModel(width, width, min_value=0, max_value=512),
        tokenizer=tokenizer,
        transformer=dit,
        scheduler=CosineDPMSolverMultistepScheduler(**scheduler),
    )
    pipeline.save_pretrained(out)


def ace_step(out: str, *, vae: dict, text: dict, transformer: dict, condition: dict) -> None:
    from diffusers import AceStepPipeline, AutoencoderOobleck, FlowMatchEulerDiscreteScheduler
    from diffusers.models.transformers.ace_step_transformer import AceStepTransformer1DModel
    from diffusers.pipelines.ace_step import AceStepConditionEncoder
    from transformers import Qwen3Config, Qwen3Model

    tokenizer = byte_level_bpe(["<|endoftext|>"], pad_token="<|endoftext|>", eos_token="<|endoftext|>")
    encoder = Qwen3Model(Qwen3Config(vocab_size=len(tokenizer), **text))
    pipeline = AceStepPipeline(
        vae=AutoencoderOobleck(**vae),
        text_encoder=encoder,
        tokenizer=tokenizer,
        transformer=AceStepTransformer1DModel(**transformer),
        condition_encoder=AceStepConditionEncoder(**condition, text_hidden_dim=encoder.config.hidden_size),
        # ACE-Step computes its own sigma schedule and hands it to the scheduler (timesteps in [0, 1])
        scheduler=FlowMatchEulerDiscreteScheduler(num_train_timesteps=1, shift=1.0),
    )
    pipeline.save_pretrained(out)
