"""Backends of a dishonest miner, loaded with `--<service>.model py:tests.e2e.garbage:<factory>`."""

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.models.base import MusicGenerator, SpeechSynthesizer, VoiceCloner


class LoudNoiseTTS(SpeechSynthesizer):
    """Full-scale noise of a plausible length: passes decoding, fails the clipping gate."""

    model_id = "garbage:noise"

    def synthesize(self, text, *, voice=None, seed=0):
        rng = np.random.default_rng(seed)
        return Audio(np.clip(rng.normal(0, 3.0, int(22_050 * len(text) * 0.07)), -1, 1), 22_050)


class NanCloner(VoiceCloner):
    """Non-finite samples: the miner refuses to encode them and answers 500."""

    model_id = "garbage:nan"

    def clone(self, text, reference, reference_text, *, seed=0):
        return Audio(np.full(16_000, np.nan), 16_000)

    def warmup(self):
        pass


class ShortMusic(MusicGenerator):
    """A fixed 0.3 s blip whatever was asked: fails the length gate."""

    model_id = "garbage:short"

    def generate(self, prompt, seconds, *, seed=0):
        return Audio(0.3 * np.sin(np.arange(9_600) * 0.05), 32_000)


class NoiseMusic(MusicGenerator):
    """Quiet white noise of the length asked for: passes every gate, and the music penalties take its score."""

    model_id = "garbage:noise-music"

    def generate(self, prompt, seconds, *, seed=0):
        rng = np.random.default_rng(seed)
        return Audio((0.1 * rng.standard_normal(int(32_000 * seconds))).astype(np.float32), 32_000)


class SilentMusic(MusicGenerator):
    """Digital silence of the length asked for: the silence gate's case."""

    model_id = "garbage:silence"

    def generate(self, prompt, seconds, *, seed=0):
        return Audio(np.zeros(int(32_000 * seconds), dtype=np.float32), 32_000)


REFUSAL = (
    "this miner refuses every music request with a reason longer than eighty characters, so that a check which"
    " cuts it mid-word shows"
)


class RefusingMusic(MusicGenerator):
    """Refuses every request as the caller's fault (HTTP 400), with a long reason."""

    model_id = "garbage:refuse"

    def generate(self, prompt, seconds, *, seed=0):
        raise WireError(REFUSAL)

    def warmup(self):
        pass


def noise_music(device="cpu"):
    return NoiseMusic()


def silent_music(device="cpu"):
    return SilentMusic()


def refusing_music(device="cpu"):
    return RefusingMusic()


def tts(device="cpu"):
    return LoudNoiseTTS()


def vc(device="cpu"):
    return NanCloner()


def music(device="cpu"):
    return ShortMusic()


GARBAGE_MODELS = {service: f"py:tests.e2e.garbage:{service}" for service in ("tts", "vc", "music")}
