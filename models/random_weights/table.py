"""The one table of random-weight stand-ins: each published model id -> its builder and the config values of
each size (the values themselves: sizes.py). `tiny`: a few small layers of the same architecture, for tests
(seconds on a CPU). `full`: the published model's config values, for timing (benchmarks, gpu-check); their
output means nothing. A stand-in with one size (its package fixes the architecture) lists it alone; any size
asked gets it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from audionet.models.random_weights import (
    coqui,
    diffusion,
    evaluators,
    f5,
    generation,
    higgs,
    omnivoice,
    speech_lm,
    voxcpm,
)
from audionet.models.random_weights.sizes import (
    ACE_STEP_FULL,
    ACE_STEP_TINY,
    CLAP_FULL,
    CLAP_TINY,
    COQUI_VITS_TINY,
    CSM_FULL,
    CSM_TINY,
    DAC_44K,
    DIA_TINY,
    F5_FULL,
    F5_TINY,
    GAIN,
    HIGGS_FULL,
    HIGGS_TINY,
    MUSICGEN_TINY,
    OMNIVOICE_FULL,
    OMNIVOICE_TINY,
    PHONON_TINY,
    POCKET_TINY,
    SPEECHT5_TINY,
    STABLE_AUDIO_FULL,
    STABLE_AUDIO_TINY,
    VIBEVOICE_FULL,
    VIBEVOICE_TINY,
    VITS_TINY,
    VOXCPM2_FULL,
    VOXCPM2_TINY,
    WAVLM_TINY,
    WHISPER_TINY,
    XTTS_FULL,
    XTTS_TINY,
    musicgen_config,
    whisper_large_config,
)

SIZES = ("tiny", "full")


@dataclass(frozen=True)
class StandIn:
    build: Callable[..., None]  # build(out_dir, **config values of the size)
    sizes: Mapping[str, Mapping] = field(default_factory=dict)  # size -> keyword arguments of build


# Whisper stand-ins exist per engine: the CTranslate2 format for the CPU, transformers' for CUDA.
WHISPER_TRANSFORMERS_SUFFIX = "-transformers"


def _whisper_stand_ins() -> dict[str, StandIn]:
    from audionet.models.eval.whisper_asr import CT2, TRANSFORMERS

    out = {}
    for name, layers in (("large-v3-turbo", 4), ("large-v3", 32)):
        for suffix, engine in (("", CT2), (WHISPER_TRANSFORMERS_SUFFIX, TRANSFORMERS)):
            tiny = dict(dims=WHISPER_TINY, mels=80, engine=engine)
            out[name + suffix] = StandIn(
                evaluators.whisper,
                {"tiny": tiny, "full": dict(dims=whisper_large_config(layers), mels=128, engine=engine)},
            )
    return out


GENERATION: dict[str, StandIn] = {
    "facebook/musicgen-small": StandIn(
        generation.musicgen, {"tiny": MUSICGEN_TINY, "full": musicgen_config(1024, 24, 16)}
    ),
    "facebook/musicgen-medium": StandIn(
        generation.musicgen, {"tiny": MUSICGEN_TINY, "full": musicgen_config(1536, 48, 24)}
    ),
    "facebook/musicgen-large": StandIn(
        generation.musicgen, {"tiny": MUSICGEN_TINY, "full": musicgen_config(2048, 48, 32)}
    ),
    # facebook/mms-tts-eng: the VitsConfig defaults
    "facebook/mms-tts-eng": StandIn(
        generation.vits, {"tiny": dict(config=VITS_TINY, gain=0.01), "full": dict(config={})}
    ),
    # microsoft/speecht5_tts + microsoft/speecht5_hifigan: the config defaults
    "microsoft/speecht5_tts": StandIn(generation.speecht5, {"tiny": SPEECHT5_TINY, "full": dict(model={}, vocoder={})}),
    # nari-labs/Dia-1.6B-0626 (DiaConfig's defaults) + descript/dac_44khz
    "nari-labs/Dia-1.6B-0626": StandIn(
        generation.dia,
        {"tiny": DIA_TINY, "full": dict(codec=DAC_44K | dict(encoder_hidden_size=64, decoder_hidden_size=1536))},
    ),
    "stabilityai/stable-audio-open-1.0": StandIn(
        diffusion.stable_audio, {"tiny": STABLE_AUDIO_TINY, "full": STABLE_AUDIO_FULL}
    ),
    "ACE-Step/Ace-Step1.5": StandIn(diffusion.ace_step, {"tiny": ACE_STEP_TINY, "full": ACE_STEP_FULL}),
    "sesame/csm-1b": StandIn(speech_lm.csm, {"tiny": CSM_TINY | dict(gain=GAIN), "full": CSM_FULL}),
    "vibevoice/VibeVoice-1.5B-hf": StandIn(speech_lm.vibevoice, {"tiny": VIBEVOICE_TINY, "full": VIBEVOICE_FULL}),
    "kyutai/pocket-tts": StandIn(
        speech_lm.pocket_tts,
        {"tiny": POCKET_TINY | dict(gain=GAIN), "full": dict(model=dict(vocab_size=4004), flow={}, codec={})},
    ),
    "bosonai/higgs-audio-v2-generation-3B-base": StandIn(
        higgs.higgs_audio_v2, {"tiny": HIGGS_TINY, "full": HIGGS_FULL}
    ),
    "coqui/XTTS-v2": StandIn(coqui.xtts, {"tiny": XTTS_TINY, "full": XTTS_FULL}),
    "k2-fsa/OmniVoice": StandIn(omnivoice.omnivoice, {"tiny": OMNIVOICE_TINY, "full": OMNIVOICE_FULL}),
    "tts_models/en/ljspeech/vits": StandIn(
        coqui.vits, {"tiny": dict(args=COQUI_VITS_TINY, gain=100.0), "full": dict(args={})}
    ),
    "SWivid/F5-TTS": StandIn(f5.f5_tts, {"tiny": F5_TINY, "full": F5_FULL}),
    "openbmb/VoxCPM2": StandIn(voxcpm.voxcpm2, {"tiny": VOXCPM2_TINY, "full": VOXCPM2_FULL}),
    "gradium/phonon-31m-en": StandIn(
        speech_lm.phonon,
        {"tiny": PHONON_TINY | dict(gain=GAIN), "full": dict(model=dict(vocab_size=4001), flow={}, codec={})},
    ),
}
EVALUATORS: dict[str, StandIn] = {
    "microsoft/wavlm-base-plus-sv": StandIn(
        evaluators.wavlm_sv, {"tiny": dict(config=WAVLM_TINY), "full": dict(config=dict(xvector_output_dim=512))}
    ),
    "Blinorot/UTMOS-PyTorch": StandIn(evaluators.utmos, {"full": {}}),
    "laion/larger_clap_music": StandIn(evaluators.clap, {"tiny": CLAP_TINY, "full": CLAP_FULL}),
    "facebook/audiobox-aesthetics": StandIn(evaluators.audiobox, {"full": {}}),
}


def stand_ins() -> dict[str, StandIn]:
    """Every stand-in by the id a spec names (Whisper's by model name, one per engine)."""
    return {**GENERATION, **EVALUATORS, **_whisper_stand_ins()}
