"""Voice clone by the 2026 transformers families, as tiny random-weight models built from config, saved
and loaded by directory through `hf:` (routed on the config's model_type)."""

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.services import MUSIC, TTS, VC
from audionet.models.hf import speech_lm as speech_lm_module
from audionet.models.random_weights import random_spec
from tests.batching import together
from tests.conftest import tone

pytestmark = pytest.mark.timeout(300)
HIGGS_REPLY = "<|start_header_id|>assistant<|end_header_id|>\n\n<|audio_out_bos|>"  # the generation prompt


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
    monkeypatch.setattr(speech_lm_module, "from_pretrained", lambda *a, **k: pytest.fail("loaded before the check"))
    with pytest.raises(BackendError) as error:
        MUSIC.load_backend(f"hf:{csm.model_id}", device="cpu")
    assert "is a CsmVoiceCloner, not a music backend (MusicGenerator)" in str(error.value)
    assert "\n" not in str(error.value)


@pytest.fixture(scope="module")
def vibevoice(tmp_path_factory):
    spec = random_spec("hf:vibevoice/VibeVoice-1.5B-hf", str(tmp_path_factory.mktemp("speech-lm")), size="tiny")
    return VC.load_backend(spec, device="cpu")


def test_vibevoice_clones_at_24k_follows_the_seed_and_the_reference(vibevoice):
    reference, transcript = tone(1.5, 16_000, 180.0), "The reference transcript."
    first = vibevoice.clone("Short line.", reference, transcript, seed=2)
    assert type(vibevoice).__name__ == "VibeVoiceVoiceCloner" and first.sample_rate == 24_000
    # 7.5 acoustic frames a second; the stand-in never stops, so it makes the 2 s a short line is given
    assert vibevoice.frame_rate == 7.5 and first.seconds == pytest.approx(2.0)
    assert np.isfinite(first.samples).all() and np.abs(first.samples).max() <= 1.0
    assert np.array_equal(first.samples, vibevoice.clone("Short line.", reference, transcript, seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, vibevoice.clone("Short line.", other_voice, transcript, seed=2).samples)


def test_vibevoice_prompt_is_the_voice_then_the_text(vibevoice):
    prompt = vibevoice.prompt("Hello there.")
    assert " Voice input:\n Speaker 0:<|vision_start|><|vision_pad|><|vision_end|>\n" in prompt
    assert prompt.endswith(" Text input:\n Speaker 0: Hello there.\n Speech output:\n<|vision_start|>")


@pytest.fixture(scope="module")
def pocket(tmp_path_factory):
    spec = random_spec("hf:kyutai/pocket-tts", str(tmp_path_factory.mktemp("speech-lm")), size="tiny")
    return VC.load_backend(spec, device="cpu")


def test_pocket_tts_clones_at_24k_follows_the_seed_and_the_reference(pocket):
    reference = tone(1.5, 16_000, 180.0)
    first = pocket.clone("Short line.", reference, "Unused transcript.", seed=2)
    assert type(pocket).__name__ == "PocketTtsVoiceCloner" and first.sample_rate == 24_000
    # 12.5 latent frames a second; the stand-in's end-of-speech head never fires, so a short line gets its 2 s
    assert pocket.frame_rate == 12.5 and first.seconds == pytest.approx(2.0)
    assert np.array_equal(first.samples, pocket.clone("Short line.", reference, "", seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, pocket.clone("Short line.", other_voice, "", seed=2).samples)
    assert pocket.clone("A much longer line of text that takes more time to say.", reference, "").seconds > 2.0
    assert pocket.prompt("Hi.") == "<|audio_prompt_bos|><|audio_prompt|>Hi.<|audio_bos|>"


def test_gradium_phonon_speaks_in_its_own_voice_at_24k_and_follows_the_seed(tmp_path):
    phonon = TTS.load_backend(random_spec("hf:gradium/phonon-31m-en", str(tmp_path), size="tiny"), device="cpu")
    first = phonon.synthesize("Short line.", seed=2)
    assert type(phonon).__name__ == "PhononSynthesizer" and first.sample_rate == 24_000
    assert first.seconds == pytest.approx(2.0) and phonon.prompt("Hi.") == "Hi.<|audio_bos|>"  # no voice prompt
    assert np.array_equal(first.samples, phonon.synthesize("Short line.", voice="default", seed=2).samples)
    assert not np.array_equal(first.samples, phonon.synthesize("Short line.", seed=3).samples)
    assert phonon.synthesize("A much longer line of text that takes more time to say.").seconds > 2.0
    with pytest.raises(WireError):
        phonon.synthesize("Short line.", voice="alba")


@pytest.mark.parametrize("family", ["vibevoice", "pocket"])
def test_concurrent_requests_of_one_bucket_run_as_one_batch(family, request):
    backend = request.getfixturevalue(family)
    voices = [tone(1.0, 16_000, 150.0), tone(2.0, 24_000, 250.0)]  # references of different lengths: padded
    texts = ["Short.", "Short line."]
    out, batches = together(
        backend.batcher, [lambda i=i: backend.clone(texts[i], voices[i], "Ref.", seed=i) for i in range(2)]
    )
    assert batches == [2]
    assert [out[i].seconds for i in range(2)] == [pytest.approx(2.0)] * 2
    assert not np.array_equal(out[0].samples, out[1].samples)


@pytest.fixture(scope="module")
def higgs(tmp_path_factory):
    spec = random_spec(
        "hf:bosonai/higgs-audio-v2-generation-3B-base", str(tmp_path_factory.mktemp("speech-lm")), "tiny"
    )
    return VC.load_backend(spec, device="cpu")


def test_higgs_audio_v2_clones_at_24k_follows_the_seed_and_the_reference(higgs):
    reference, transcript = tone(1.5, 16_000, 180.0), "The reference transcript."
    first = higgs.clone("Short line.", reference, transcript, seed=2)
    assert type(higgs).__name__ == "HiggsAudioV2Speech" and first.sample_rate == 24_000
    # 25 codec frames a second; the stand-in's audio head never ends a stream, so a short line gets its 2 s
    assert higgs.frame_rate == 25.0 and first.seconds == pytest.approx(2.0)
    assert np.isfinite(first.samples).all() and 0.01 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, higgs.clone("Short line.", reference, transcript, seed=2).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, higgs.clone("Short line.", other_voice, transcript, seed=2).samples)
    longer = higgs.clone("A much longer line of text that takes more time to say.", reference, transcript, seed=2)
    assert longer.seconds > first.seconds


def test_higgs_audio_v2_speaks_as_tts_from_the_same_folder(higgs):
    tts = TTS.load_backend(f"hf:{higgs.model_id}", device="cpu", warmup=False)
    first = tts.synthesize("Short line.", seed=2)
    assert type(tts).__name__ == "HiggsAudioV2Speech" and first.seconds == pytest.approx(2.0)
    assert np.array_equal(first.samples, tts.synthesize("Short line.", voice="default", seed=2).samples)
    assert not np.array_equal(first.samples, tts.synthesize("Short line.", seed=3).samples)
    prompt = tts.prompt("Hi.", None)
    assert prompt.endswith("<|start_header_id|>user<|end_header_id|>\n\nHi.<|eot_id|>" + HIGGS_REPLY)
    assert "<|AUDIO_OUT|>" not in prompt and "<|AUDIO_OUT|>" in tts.prompt("Hi.", "Ref.")


def test_higgs_audio_v2_runs_one_request_at_a_time(higgs):
    """transformers 5.23's batch_decode cuts a batch's rows where its last row's generation starts (the module's why)."""
    voices = [tone(1.0, 16_000, 150.0), tone(2.0, 24_000, 250.0)]
    out, batches = together(
        higgs.batcher, [lambda i=i: higgs.clone("Short.", voices[i], "Ref.", seed=i) for i in range(2)]
    )
    assert batches == [1, 1] and [out[i].seconds for i in range(2)] == [pytest.approx(2.0)] * 2
