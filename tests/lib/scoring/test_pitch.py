"""Pitch accuracy between a reference and a clone (different texts: F0 distributions)."""

import math

import numpy as np
import pytest

from audionet.lib.core.f0 import f0_summary
from audionet.lib.scoring.pitch import pitch_accuracy

RNG = np.random.default_rng(3)
VOICE = 120.0 * np.exp(RNG.normal(0.0, 0.12, 400))  # a male voice's voiced F0 frames


def test_same_voice_distribution_is_zero_error():
    assert pitch_accuracy(VOICE, VOICE) == {"f0_rmse_hz": 0.0, "f0_offset_st": 0.0}


def test_one_octave_up_is_twelve_semitones_and_about_the_median_in_hz():
    result = pitch_accuracy(VOICE, 2.0 * VOICE)
    assert result["f0_offset_st"] == pytest.approx(12.0)
    assert result["f0_rmse_hz"] == pytest.approx(
        float(np.sqrt(np.mean(np.quantile(VOICE, np.linspace(0.05, 0.95, 19)) ** 2)))
    )


def test_lower_clone_has_a_negative_offset_and_unvoiced_frames_are_ignored():
    lower = np.concatenate([VOICE * 2 ** (-3 / 12), np.zeros(500)])  # 3 semitones down, plus silence
    result = pitch_accuracy(np.concatenate([VOICE, np.zeros(50)]), lower)
    assert result["f0_offset_st"] == pytest.approx(-3.0, abs=1e-9)
    assert 5.0 < result["f0_rmse_hz"] < 40.0


def test_too_little_voiced_speech_gives_nothing_rather_than_a_number():
    assert pitch_accuracy(VOICE, VOICE[:10]) == {}
    assert f0_summary(np.zeros(100)) == (0.0, 0.0)
    median, spread = f0_summary(VOICE)
    assert median == pytest.approx(float(np.median(VOICE)), rel=1e-6) and math.isclose(
        spread, float(np.std(np.log(VOICE)))
    )
