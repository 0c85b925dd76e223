"""OmniVoice through the omnivoice package, as a tiny random-weight stand-in built from the package's own config
classes, saved in its layout and loaded by folder through `hf:` (routed on its config.json's own model_type)."""

import numpy as np
import pytest

from audionet.lib.services import TTS, VC
from audionet.models.random_weights import random_spec
from tests.batching import together
from tests.conftest import tone

pytestmark = pytest.mark.timeout(600)
TRANSCRIPT = "The reference transcript."  # about as long as the 1.5 s reference takes to say


@pytest.fixture(scope="module")
def omnivoice(tmp_path_factory):
    spec = random_spec("hf:k2-fsa/OmniVoice", str(tmp_path_factory.mktemp("omnivoice")), "tiny")
    return VC.load_backend(spec, device="cpu")


def test_omnivoice_clones_at_24k_follows_the_seed_and_the_reference(omnivoice):
    reference = tone(1.5, 16_000, 180.0)
    first = omnivoice.clone("Short line.", reference, TRANSCRIPT, seed=2)
    assert type(omnivoice).__name__ == "OmniVoiceSpeech" and first.sample_rate == 24_000 and first.samples.ndim == 1
    # a diffusion LM: the length is its estimate from the text at the reference's speaking rate, whatever the weights
    assert 0.5 < first.seconds < 4.0 and np.isfinite(first.samples).all()
    assert 0.01 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, omnivoice.clone("Short line.", reference, TRANSCRIPT, seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, omnivoice.clone("Short line.", other_voice, TRANSCRIPT, seed=2).samples)
    longer = omnivoice.clone("A much longer line of text that takes more time to say.", reference, TRANSCRIPT)
    assert longer.seconds > 2 * first.seconds


def test_omnivoice_batches_concurrent_requests_of_one_bucket(omnivoice):
    voices = [tone(1.0, 16_000, 150.0), tone(2.0, 24_000, 250.0)]  # references of different lengths
    out, batches = together(
        omnivoice.batcher,
        [lambda i=i: omnivoice.clone(["Short.", "Short line."][i], voices[i], "Ref.", seed=i) for i in range(2)],
    )
    assert batches == [2] and all(clip.seconds > 0.5 for clip in out)
    shared = min(len(clip.samples) for clip in out)  # each is padded with 0.1 s of silence first
    assert not np.array_equal(out[0].samples[:shared], out[1].samples[:shared])


def test_omnivoice_speaks_as_tts_in_a_voice_it_picks(omnivoice):
    tts = TTS.load_backend(f"hf:{omnivoice.model_id}", device="cpu", warmup=False)
    first = tts.synthesize("Short line.", seed=2)
    assert type(tts).__name__ == "OmniVoiceSpeech" and 0.5 < first.seconds < 4.0
    assert np.array_equal(first.samples, tts.synthesize("Short line.", voice="default", seed=2).samples)
    assert not np.array_equal(first.samples, tts.synthesize("Short line.", seed=3).samples)
