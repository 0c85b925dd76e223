"""The generation real-time-factor study takes the miner's device flag and rule: one result per device."""

import json

import pytest

from audionet.benchmarks.generation import main as generation
from audionet.lib.core.errors import BackendError


def test_one_table_per_device_from_the_pool_flag(tmp_path):
    argv = ["--only", "espeak", "--runs", "2", "--pool.devices", "cpu", "--out", str(tmp_path)]
    assert generation.main(argv) == 0
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith("cpu") and {p.name for p in folder.iterdir()} == {
        "generation.json",
        "generation.md",
        "generation.png",
    }
    (row,) = json.loads((folder / "generation.json").read_text())["rows"]
    assert row["backend"] == "espeak" and row["device"] == "cpu"
    assert row["audio_s"] > 0 and 0 < row["rtf"] < 10
    assert len(row["gen_s_runs"]) == 2 and (min(row["gen_s_runs"]), max(row["gen_s_runs"])) == (
        row["gen_s_min"],
        row["gen_s_max"],
    )
    markdown = (folder / "generation.md").read_text()
    assert (
        markdown.startswith("Regenerate: `audionet-bench generation --only espeak")
        and "| espeak | tts | shipped |" in markdown
    )


def test_a_device_that_is_not_there_is_named_with_its_flag(tmp_path):
    argv = ["--only", "espeak", "--pool.devices", "cuda:3", "--out", str(tmp_path)]
    with pytest.raises(BackendError, match="--pool.devices: device cuda:3"):
        generation.main(argv)


def test_diffusion_music_is_a_ratio_to_musicgen_for_the_same_length():
    from audionet.benchmarks.generation.report import RANDOM, musicgen_ratios

    def row(label, seconds, gen):
        return {"backend": label, "service": "music", "weights": RANDOM, "audio_s": seconds, "gen_s_mean": gen}

    rows = [row("MusicGen-small (5 s, CFG 3)", 5.0, 40.0), row("ACE-Step", 5.0, 10.0), row("other length", 7.0, 1.0)]
    assert musicgen_ratios(rows) == ["ACE-Step: 0.250 x MusicGen-small's time for the same 5.0 s."]
    assert musicgen_ratios(rows[1:]) == []
