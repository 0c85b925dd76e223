"""Music by diffusion: Stable Audio Open and ACE-Step as tiny random-weight pipelines built from config,
saved with save_pretrained and loaded by directory through `hf:` (routed on model_index.json)."""

import json

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.services import MUSIC, TTS
from audionet.lib.services.music import PRESET_MODELS
from audionet.models.hf import diffusion
from audionet.models.random_weights import random_spec
from tests.batching import together

pytestmark = pytest.mark.timeout(300)

FAMILIES = {
    "stable-audio": ("hf:stabilityai/stable-audio-open-1.0", "StableAudioMusicGenerator", 44_100),
    "ace-step": ("hf:ACE-Step/Ace-Step1.5", "AceStepMusicGenerator", 48_000),
}


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("diffusion-models"))
    return {family: random_spec(spec, cache, size="tiny") for family, (spec, _, _) in FAMILIES.items()}


@pytest.fixture(scope="module", params=[pytest.param("stable-audio", marks=pytest.mark.slow), "ace-step"])
def music(request, specs):
    return request.param, MUSIC.load_backend(specs[request.param], device="cpu", preset="fast")


def test_routes_on_the_pipeline_class_and_follows_length_rate_and_seed(music):
    family, backend = music
    _, cls, rate = FAMILIES[family]
    assert type(backend).__name__ == cls and backend.sample_rate == rate and backend.preset == "fast"
    first = backend.generate("calm piano, 80 bpm", 2.5, seed=7)
    assert first.sample_rate == rate and first.samples.ndim == 1 and first.samples.dtype == np.float32
    assert len(first.samples) == round(2.5 * rate)  # stereo folded to mono, trimmed to the request
    assert np.isfinite(first.samples).all() and np.abs(first.samples).max() <= 1.0 and first.samples.std() > 0
    assert np.array_equal(first.samples, backend.generate("calm piano, 80 bpm", 2.5, seed=7).samples)
    assert not np.array_equal(first.samples, backend.generate("calm piano, 80 bpm", 2.5, seed=8).samples)
    assert backend.generate("drums", 1.2, seed=1).seconds == pytest.approx(1.2)
    with pytest.raises(WireError, match="music length"):
        backend.generate("drums", backend.max_seconds + 1, seed=1)


@pytest.mark.slow
def test_a_batch_gives_each_request_what_it_gets_alone(music):
    """Concurrent requests of one length bucket run as one batch, each with its own seeded generator."""
    _, backend = music
    alone = {seed: backend.generate("rock", 1.5, seed=seed).samples for seed in (1, 2)}
    out, batches = together(backend.batcher, [lambda s=s: backend.generate("rock", 1.5, seed=s) for s in (1, 2)])
    assert batches == [2]
    for n, seed in enumerate((1, 2)):
        np.testing.assert_allclose(out[n].samples, alone[seed], atol=1e-4)


def test_presets_pick_step_counts_per_family_and_a_family_per_preset(specs):
    balanced = MUSIC.load_backend(specs["stable-audio"], device="cpu", preset="quality", warmup=False)
    assert (balanced.settings.steps, balanced.settings.guidance) == (100, 7.0)
    turbo = MUSIC.load_backend(specs["ace-step"], device="cpu", preset="quality", warmup=False)
    assert turbo.pipe.is_turbo and (turbo.settings.steps, turbo.settings.guidance) == (8, 1.0)  # distilled
    assert set(PRESET_MODELS) == {"fast", "balanced", "quality"}
    assert PRESET_MODELS["balanced"] == "hf:stabilityai/stable-audio-open-1.0"


def test_wrong_service_unsupported_pipeline_and_offline_preset_are_one_line(specs, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(diffusion, "from_pretrained", lambda *a, **k: pytest.fail("loaded before the check"))
    with pytest.raises(BackendError, match="is a StableAudioMusicGenerator, not a tts backend") as error:
        TTS.load_backend(specs["stable-audio"], device="cpu")
    (tmp_path / "model_index.json").write_text(json.dumps({"_class_name": "AudioLDM2Pipeline"}))
    cases = [
        (str(tmp_path), "is a diffusers AudioLDM2Pipeline; supported: AceStepPipeline, StableAudioPipeline"),
        ("preset", "model ACE-Step/acestep-v15-xl-turbo-diffusers not found locally and the hub is offline"),
    ]
    for spec, message in cases:
        with pytest.raises(BackendError) as error:
            MUSIC.load_backend(spec if spec == "preset" else f"hf:{spec}", device="cpu", preset="fast")
        assert message in str(error.value) and "\n" not in str(error.value)


def test_stereo_folds_to_mono_within_range():
    stereo = np.stack([np.full(4, 0.5), np.full(4, -1.5)]).astype(np.float32)
    np.testing.assert_allclose(diffusion.fold_to_mono(stereo), [-0.5] * 4)
    assert diffusion.fold_to_mono(np.array([[np.nan, 2.0]])).tolist() == [0.0, 1.0]
