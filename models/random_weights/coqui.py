"""Stand-ins for Coqui TTS's XTTS-v2 (coqui/XTTS-v2) and VITS (tts_models/en/ljspeech/vits). XTTS-v2 is built from the coqui-tts package's own config classes
(`XttsConfig`, `XttsArgs`) and saved in the checkpoint's layout: `config.json`, `model.pth` ({"model": state dict}),
`vocab.json` (a `tokenizers` file: the specials XTTS's tokenizer writes, `[en]`, and one token per character) and
`speakers_xtts.pth` (two named voices, their latents computed by the stand-in itself from two tones). The package fixes
the HiFi-GAN decoder's and the speaker encoder's sizes (XttsArgs has no field for them): only the GPT is tiny."""

from __future__ import annotations

import os

from audionet.models.random_weights.speech_lm import output_gain

SPECIALS = ["[STOP]", "[UNK]", "[SPACE]", "[START]", "[en]"]
CHARACTERS = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'-:;\"()")
VOICES = {"tone-180": 180.0, "tone-300": 300.0}  # name -> the tone its latents are computed from


def character_vocab(path: str) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {token: i for i, token in enumerate(SPECIALS + CHARACTERS)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tokenizer.add_special_tokens(SPECIALS)
    tokenizer.save(path)


def xtts(out: str, *, args: dict) -> None:
    """The stand-in's GPT never writes its stop token (its row of the audio head zero, its bias -100), as random CSM
    and Dia never stop: its length is the codes it is given."""
    import numpy as np
    import torch
    from TTS.tts.configs.xtts_config import XttsArgs, XttsConfig
    from TTS.tts.layers.xtts.tokenizer import VoiceBpeTokenizer
    from TTS.tts.models.xtts import Xtts

    os.makedirs(out, exist_ok=True)
    vocab = os.path.join(out, "vocab.json")
    character_vocab(vocab)
    config = XttsConfig(model_args=XttsArgs(**args))
    model = Xtts.init_from_config(config)
    model.tokenizer = VoiceBpeTokenizer(vocab)
    model.init_models()  # the GPT is sized by the tokenizer's vocabulary
    stop = config.model_args.gpt_stop_audio_token
    with torch.no_grad():
        model.gpt.mel_head.weight[stop].zero_()
        model.gpt.mel_head.bias[stop] = -100.0
    torch.save({"model": model.state_dict()}, os.path.join(out, "model.pth"))
    config.save_json(os.path.join(out, "config.json"))
    model.eval()
    rate = config.model_args.input_sample_rate
    speakers = {}
    for name, frequency in VOICES.items():
        tone = 0.3 * np.sin(2 * np.pi * frequency * np.arange(3 * rate) / rate)
        audio = torch.from_numpy(tone.astype(np.float32))[None]
        speakers[name] = {
            "gpt_cond_latent": model.get_gpt_cond_latents(audio, rate, length=config.gpt_cond_len),
            "speaker_embedding": model.get_speaker_embedding(audio, rate),
        }
    torch.save(speakers, os.path.join(out, "speakers_xtts.pth"))


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def vits(out: str, *, args: dict, gain: float = 1.0) -> None:
    """Coqui's VITS from its `VitsConfig`/`VitsArgs`, on characters (`use_phonemes` off: the published English
    models phonemise with the `espeak-ng` program, which nothing here installs), saved as `config.json` and
    `model.pth` ({"model": state dict}); no discriminator (inference only)."""
    import torch
    from TTS.tts.configs.shared_configs import CharactersConfig
    from TTS.tts.configs.vits_config import VitsConfig
    from TTS.tts.models.vits import Vits, VitsArgs

    characters = CharactersConfig(
        characters_class="TTS.tts.models.vits.VitsCharacters",
        pad="_",
        eos="",
        bos="",
        blank=None,
        characters=LETTERS,
        punctuations=" !'(),-.:;?",
        phonemes="",
    )
    config = VitsConfig(
        model_args=VitsArgs(**args, init_discriminator=False),
        use_phonemes=False,
        text_cleaner="english_cleaners",
        characters=characters,
        add_blank=True,
    )
    os.makedirs(out, exist_ok=True)
    model = Vits.init_from_config(config)
    output_gain(model.waveform_decoder.conv_post, gain)  # before its tanh
    torch.save({"model": model.state_dict()}, os.path.join(out, "model.pth"))
    config.save_json(os.path.join(out, "config.json"))
