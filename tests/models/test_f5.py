"""F5-TTS through the f5-tts package (`f5-tts:`), as a tiny random-weight stand-in built from the package's own
classes and vocos' config format, saved in SWivid/F5-TTS's layout and loaded by folder."""

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError
from audionet.lib.services import TTS, VC
from audionet.models.random_weights import random_spec
from tests.conftest import tone

pytestmark = pytest.mark.timeout(600)
TRANSCRIPT = "The reference transcript."


@pytest.fixture(scope="module")
def f5(tmp_path_factory):
    spec = random_spec("f5-tts:SWivid/F5-TTS", str(tmp_path_factory.mktemp("f5")), "tiny")
    return VC.load_backend(spec, device="cpu")


def test_f5_clones_at_24k_follows_the_seed_and_the_reference(f5):
    reference = tone(1.5, 16_000, 180.0)
    first = f5.clone("Short line.", reference, TRANSCRIPT, seed=2)
    assert type(f5).__name__ == "F5VoiceCloner" and first.sample_rate == 24_000 and first.samples.ndim == 1
    # the reference's frames per byte of its transcript, applied to the text: 1.5 s x 11 / 25 bytes
    assert first.seconds == pytest.approx(1.5 * 11 / 25, abs=0.02)
    assert np.isfinite(first.samples).all() and 0.01 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, f5.clone("Short line.", reference, TRANSCRIPT, seed=2).samples)
    assert not np.array_equal(first.samples, f5.clone("Short line.", reference, TRANSCRIPT, seed=3).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, f5.clone("Short line.", other_voice, TRANSCRIPT, seed=2).samples)
    longer = f5.clone("A much longer line of text that takes more time to say.", reference, TRANSCRIPT, seed=2)
    assert longer.seconds > 4 * first.seconds


def test_f5_is_a_voice_cloner_only_and_a_spec_without_a_model_is_one_line(f5):
    with pytest.raises(BackendError, match="is a F5VoiceCloner, not a tts backend"):
        TTS.load_backend(f"f5-tts:{f5.model_id}", device="cpu")
    with pytest.raises(BackendError, match="f5-tts: spec needs a model id or a local directory"):
        VC.load_backend("f5-tts:", device="cpu")
