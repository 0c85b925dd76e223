"""OmniVoice through the omnivoice package, as a tiny random-weight stand-in built from the package's own config
classes, saved in its layout and loaded by folder through `hf:` (routed on its config.json's own model_type)."""

import numpy as np
import pytest

from audionet.lib.services import TTS
from tests.batching import together
from tests.conftest import tone
from tests.models.stand_ins import LONGER, TRANSCRIPT, checked_clone, stand_in_fixture

pytestmark = pytest.mark.timeout(600)


omnivoice = stand_in_fixture("omnivoice", "hf:k2-fsa/OmniVoice")


def test_omnivoice_clones_at_24k_follows_the_seed_and_the_reference(omnivoice):
    first = checked_clone(omnivoice, 24_000)
    assert type(omnivoice).__name__ == "OmniVoiceSpeech"
    # a diffusion LM: the length is its estimate from the text at the reference's speaking rate, whatever the weights
    assert 0.5 < first.seconds < 4.0
    longer = omnivoice.clone(LONGER, tone(1.5, 16_000, 180.0), TRANSCRIPT)
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
