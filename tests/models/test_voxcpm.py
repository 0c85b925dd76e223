"""VoxCPM2 through the voxcpm package (`voxcpm:`), as a tiny random-weight stand-in built from the package's own
config classes, saved in openbmb/VoxCPM2's layout and loaded by folder."""

import os
import tempfile

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError
from audionet.lib.services import TTS, VC
from tests.conftest import tone
from tests.models.stand_ins import LONGER, TEXT, TRANSCRIPT, checked_clone, stand_in_fixture

pytestmark = pytest.mark.timeout(600)


voxcpm = stand_in_fixture("voxcpm", "voxcpm:openbmb/VoxCPM2")


def test_voxcpm_clones_at_48k_in_the_frame_budget_and_follows_the_seed_and_the_reference(voxcpm):
    first = checked_clone(voxcpm, 48_000)
    assert type(voxcpm).__name__ == "VoxCpmSpeech" and voxcpm.frame_rate == 6.25
    # the stand-in's zeroed stop head never stops: the budget, 1 s + 11 characters at 12 a second in 2 s buckets,
    # is 13 patches of 0.16 s
    assert first.seconds == pytest.approx(13 * 0.16)
    longer = voxcpm.clone(LONGER, tone(1.5, 16_000, 180.0), TRANSCRIPT, seed=2)
    assert longer.seconds > 2 * first.seconds


def test_voxcpm_writes_the_reference_to_a_private_file_of_its_own_and_removes_it(voxcpm, monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the backend's private folder goes
    seen = []
    generate = voxcpm.model.generate

    def spy(**kwargs):
        seen.append(kwargs["reference_wav_path"])
        assert kwargs["prompt_wav_path"] == kwargs["reference_wav_path"] and os.path.isfile(seen[0])
        assert oct(os.stat(os.path.dirname(seen[0])).st_mode & 0o777) == "0o700"
        return generate(**kwargs)

    monkeypatch.setattr(voxcpm.model, "generate", spy)
    voxcpm.clone(TEXT, tone(1.0, 16_000, 200.0), TRANSCRIPT, seed=1)
    assert seen[0].startswith(str(tmp_path)) and not os.listdir(tmp_path)  # removed after the request


def test_voxcpm_speaks_as_tts_in_a_voice_it_picks(voxcpm):
    tts = TTS.load_backend(f"voxcpm:{voxcpm.model_id}", device="cpu", warmup=False)
    first = tts.synthesize(TEXT, seed=2)
    assert type(tts).__name__ == "VoxCpmSpeech" and first.sample_rate == 48_000
    assert first.seconds == pytest.approx(13 * 0.16) and 0.01 < np.abs(first.samples).max() <= 1.0
    assert np.array_equal(first.samples, tts.synthesize(TEXT, voice="default", seed=2).samples)
    assert not np.array_equal(first.samples, tts.synthesize(TEXT, seed=3).samples)


def test_voxcpm_spec_without_a_model_or_of_another_family_is_one_line(voxcpm, tmp_path):
    with pytest.raises(BackendError, match="voxcpm: spec needs a model id or a local directory"):
        VC.load_backend("voxcpm:", device="cpu")
    (tmp_path / "config.json").write_text('{"architecture": "voxcpm"}')
    with pytest.raises(BackendError, match="is not a VoxCPM2 checkpoint"):
        VC.load_backend(f"voxcpm:{tmp_path}", device="cpu")
