"""F5-TTS through the f5-tts package (`f5-tts:`), as a tiny random-weight stand-in built from the package's own
classes and vocos' config format, saved in SWivid/F5-TTS's layout and loaded by folder."""

import pytest

from audionet.lib.core.errors import BackendError
from audionet.lib.services import TTS, VC
from tests.conftest import tone
from tests.models.stand_ins import LONGER, TRANSCRIPT, checked_clone, stand_in_fixture

pytestmark = pytest.mark.timeout(600)


f5 = stand_in_fixture("f5", "f5-tts:SWivid/F5-TTS")


def test_f5_clones_at_24k_follows_the_seed_and_the_reference(f5):
    first = checked_clone(f5, 24_000)
    assert type(f5).__name__ == "F5VoiceCloner"
    # the reference's frames per byte of its transcript, applied to the text: 1.5 s x 11 / 25 bytes
    assert first.seconds == pytest.approx(1.5 * 11 / 25, abs=0.02)
    longer = f5.clone(LONGER, tone(1.5, 16_000, 180.0), TRANSCRIPT, seed=2)
    assert longer.seconds > 4 * first.seconds


def test_f5_is_a_voice_cloner_only_and_a_spec_without_a_model_is_one_line(f5):
    with pytest.raises(BackendError, match="is a F5VoiceCloner, not a tts backend"):
        TTS.load_backend(f"f5-tts:{f5.model_id}", device="cpu")
    with pytest.raises(BackendError, match="f5-tts: spec needs a model id or a local directory"):
        VC.load_backend("f5-tts:", device="cpu")
