import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.scoring.gates import clipped, silent, wrong_length
from audionet.lib.services import MUSIC, TTS, MusicRequest, TTSRequest
from tests.conftest import tone

TEXT = "The quick brown fox jumps over the lazy dog near the river bank."  # 64 chars


def speechlike(seconds=4.0, rate=22_050):
    """A 150 Hz buzz, amplitude-modulated at a syllable rate (4 Hz)."""
    t = np.arange(int(seconds * rate)) / rate
    return Audio(0.4 * np.sin(2 * np.pi * 150 * t) * (0.55 + 0.45 * np.sin(2 * np.pi * 4 * t)), rate)


def test_gates_fire_on_silence_clipping_and_wrong_length():
    request = TTSRequest(text=TEXT)
    ok = speechlike()
    assert wrong_length(ok, *TTS.expected_seconds(request)) is None and silent(ok) is None and clipped(ok) is None
    assert "silent" in silent(Audio(np.zeros(22_050 * 4), 22_050))
    assert "silent" in silent(Audio(np.random.default_rng(0).normal(0, 1e-4, 22_050 * 4), 22_050))
    loud = Audio(np.clip(np.random.default_rng(0).normal(0, 3, 22_050 * 4), -1, 1), 22_050)
    assert "clipped" in clipped(loud)
    assert "wrong length" in wrong_length(speechlike(0.5), *TTS.expected_seconds(request))
    assert "wrong length" in wrong_length(speechlike(25.0), *TTS.expected_seconds(request))
    music = MusicRequest(prompt="calm piano", seconds=8.0)
    assert wrong_length(tone(8.3), *MUSIC.expected_seconds(music)) is None
    assert "wrong length" in wrong_length(tone(5.0), *MUSIC.expected_seconds(music))
