"""The naturalness student (the robust ceiling on naturalness): its shipped weights load, it puts natural
speech far above the naturalness range's floor and robotic speech far below it, gain does not move it, and
awkward clips give finite scores. How far attacks move it: benchmarks/attacks (measured, not tested)."""

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.models.baselines.espeak import EspeakSynthesizer
from audionet.models.baselines.world_vc import move_toward
from audionet.models.eval.robust_mos import SAMPLE_RATE, WEIGHTS, RobustMos
from tests.clips import awkward

SENTENCES = (
    "The kettle clicked off just as the phone began to ring.",
    "We painted the fence white and left it to dry before the storm.",
)


@pytest.fixture(scope="module")
def student():
    return RobustMos()


def test_the_weights_ship_beside_the_module_and_name_their_features(student):
    assert WEIGHTS.exists() and WEIGHTS.stat().st_size < 50_000
    assert 0 < len(student.network.selected) < 97 and student.guard


def test_natural_speech_is_above_the_range_and_robotic_speech_below_it(student, speech):
    espeak = EspeakSynthesizer()
    natural = [speech(text) for text in SENTENCES]
    robotic = [espeak.synthesize(text, voice=voice, seed=3) for text, voice in zip(SENTENCES, ("en-us", "en-gb+f2"))]
    cloned = [move_toward(robotic[0], natural[1])]  # the espeak cloner: espeak moved toward a Kokoro voice
    scores = student.predict(natural + robotic + cloned)
    assert min(scores[:2]) >= 3.5 and max(scores[2:]) < 2.0, scores  # the ceiling: never binds / gives nothing


def test_gain_does_not_move_it_and_awkward_clips_are_finite(student, speech):
    clip = speech(SENTENCES[0])
    loud, quiet = student.predict([clip, Audio(clip.samples * 0.1, clip.sample_rate)])
    assert abs(loud - quiet) < 0.05
    for audio in [*awkward().values(), Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)]:
        (value,) = student.predict([audio])
        assert 1.0 <= value <= 5.0
