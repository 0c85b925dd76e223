"""Voice clone by the 2026 transformers families, as tiny random-weight models built from config, saved
and loaded by directory through `hf:` (routed on the config's model_type)."""

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError
from audionet.lib.services import MUSIC, VC
from audionet.models.hf import csm as csm_module
from audionet.models.random_weights import random_spec
from tests.conftest import tone

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def csm(tmp_path_factory):
    spec = random_spec("hf:sesame/csm-1b", str(tmp_path_factory.mktemp("speech-lm")), size="tiny")
    return VC.load_backend(spec, device="cpu")


def test_csm_clones_at_24k_follows_the_seed_and_the_reference(csm):
    reference, transcript = tone(1.5, 16_000, 180.0), "The reference transcript."
    first = csm.clone("Short line.", reference, transcript, seed=2)
    assert type(csm).__name__ == "CsmVoiceCloner" and first.sample_rate == 24_000 and first.samples.ndim == 1
    # random weights never stop by themselves: the length is the frames the text is given, 2 s for a short line
    assert first.seconds == pytest.approx(csm.frames_for("Short line.") / csm.frame_rate) == pytest.approx(2.0)
    assert np.isfinite(first.samples).all() and np.abs(first.samples).max() <= 1.0
    assert np.array_equal(first.samples, csm.clone("Short line.", reference, transcript, seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, csm.clone("Short line.", other_voice, transcript, seed=2).samples)
    longer = csm.clone("A much longer line of text that takes more time to say.", reference, transcript, seed=2)
    assert longer.seconds > first.seconds


def test_csm_prompt_is_the_reference_turn_then_the_text_turn(csm):
    turn = csm.turn("Hello  there.", audio=True) + csm.turn("Bye.", audio=False)
    assert turn == "<|begin_of_text|>[0]Hello there.<|end_of_text|><|AUDIO|><|audio_eos|>" + (
        "<|begin_of_text|>[0]Bye.<|end_of_text|>"
    )


def test_a_clone_model_in_the_music_slot_is_one_line_before_it_loads(csm, monkeypatch):
    monkeypatch.setattr(csm_module, "from_pretrained", lambda *a, **k: pytest.fail("loaded before the check"))
    with pytest.raises(BackendError) as error:
        MUSIC.load_backend(f"hf:{csm.model_id}", device="cpu")
    assert "is a CsmVoiceCloner, not a music backend (MusicGenerator)" in str(error.value)
    assert "\n" not in str(error.value)
