"""XTTS-v2 and VITS through the coqui-tts package, as tiny random-weight stand-ins built from the package's own config
classes, saved in the checkpoints' layout and loaded by folder through `hf:` (routed on Coqui's config.json `model`)."""

import json

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.services import MUSIC, TTS, VC
from audionet.models.random_weights import random_spec
from tests.conftest import tone

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def xtts(tmp_path_factory):
    return VC.load_backend(random_spec("hf:coqui/XTTS-v2", str(tmp_path_factory.mktemp("coqui")), "tiny"), device="cpu")


def test_xtts_clones_at_24k_follows_the_seed_and_the_reference(xtts):
    reference = tone(1.5, 16_000, 180.0)
    first = xtts.clone("Short line.", reference, "Unused transcript.", seed=2)
    assert type(xtts).__name__ == "XttsSpeech" and first.sample_rate == 24_000 and first.samples.ndim == 1
    # 21.5 codes a second; the stand-in's GPT never writes its stop token, so a short line gets its 2 s of codes
    assert xtts.frame_rate == pytest.approx(22_050 / 1024) and first.seconds == pytest.approx(2.0, abs=0.1)
    assert np.isfinite(first.samples).all() and 0.005 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, xtts.clone("Short line.", reference, "", seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, xtts.clone("Short line.", other_voice, "", seed=2).samples)
    assert xtts.clone("A much longer line of text that takes more time to say.", reference, "").seconds > 4.0


def test_xtts_speaks_as_tts_in_its_named_voices(xtts):
    tts = TTS.load_backend(f"hf:{xtts.model_id}", device="cpu", warmup=False)
    assert tts.voices == ("tone-180", "tone-300")  # speakers_xtts.pth's names, the first the default
    first = tts.synthesize("Short line.", seed=2)
    assert np.array_equal(first.samples, tts.synthesize("Short line.", voice="tone-180", seed=2).samples)
    assert not np.array_equal(first.samples, tts.synthesize("Short line.", voice="tone-300", seed=2).samples)
    with pytest.raises(WireError, match="unknown voice"):
        tts.synthesize("Short line.", voice="someone")


def test_a_coqui_model_routes_on_its_config_and_an_unknown_one_is_one_line(xtts, tmp_path):
    with pytest.raises(BackendError, match="is a XttsSpeech, not a music backend"):
        MUSIC.load_backend(f"hf:{xtts.model_id}", device="cpu")
    (tmp_path / "config.json").write_text(json.dumps({"model": "tortoise"}))
    with pytest.raises(BackendError) as error:
        VC.load_backend(f"hf:{tmp_path}", device="cpu")
    assert str(error.value) == f"model {tmp_path} is Coqui TTS 'tortoise'; supported: vits, xtts"


def test_coqui_vits_speaks_at_22k_sentence_by_sentence_and_follows_the_seed(tmp_path):
    tts = TTS.load_backend(random_spec("hf:tts_models/en/ljspeech/vits", str(tmp_path), "tiny"), device="cpu")
    text = "Bright sunlight filled the library. The children read quietly by the windows."
    first = tts.synthesize(text, seed=1)
    assert type(tts).__name__ == "CoquiVitsSynthesizer" and first.sample_rate == 22_050
    assert 1.0 < first.seconds < 0.2 * len(text) + 1.5  # within the validator's length bound for the text
    assert np.isfinite(first.samples).all() and 0.01 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, tts.synthesize(text, voice="default", seed=1).samples)
    assert not np.array_equal(first.samples, tts.synthesize(text, seed=2).samples)
    assert tts.synthesize(text + " " + text, seed=1).seconds > first.seconds
    with pytest.raises(BackendError, match="is a CoquiVitsSynthesizer, not a vc backend"):
        VC.load_backend(f"hf:{tts.model_id}", device="cpu")
