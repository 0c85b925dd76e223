"""audionet-bench judges at a small size: speech and music classes judged by the offline profile, each
answer on its own, and the result re-renders from its JSON."""

import json

import pytest

from audionet.benchmarks.judges import main as judges
from audionet.lib.core.devices import device_slug

pytestmark = pytest.mark.slow


def test_the_study_ranks_real_audio_above_cheap_and_broken_audio(tmp_path):
    assert judges.main(["--sentences", "2", "--tracks", "2", "--out", str(tmp_path)]) == 0
    stem = tmp_path / device_slug("cpu") / "judges-offline"
    data = json.loads(stem.with_suffix(".json").read_text())
    assert (
        stem.with_suffix(".md").read_text() == f"Regenerate: `{data['command']}`\n\n{judges.markdown(data).rstrip()}\n"
    )
    speech = data["speech_classes"]["findings"]["mean_score"]
    assert speech["kokoro"] > speech["espeak"] and speech["kokoro"] > speech["band-limited 8 kHz"]
    music = data["music_classes"]["findings"]
    assert music["mean_score"]["neural tracks"] > music["mean_score"]["noise"] + 0.5
    assert music["pairs"] == 2 and len(data["music_classes"]["rows"]["1 s loop"]) == 2
    for row in data["music_classes"]["rows"]["procedural synth"] + data["music_classes"]["rows"]["neural tracks"]:
        assert row["learned_middle"] <= row["owned"] <= row["owned_uncapped"]  # owning CLAP and Audiobox pays
    owned = music["learned_owned"]
    assert owned["synth_gain_capped"] <= owned["synth_gain_uncapped"] and owned["neural_kept_at_top"]["least"] <= 1
    assert stem.with_suffix(".png").stat().st_size > 0
