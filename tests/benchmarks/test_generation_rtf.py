"""The generation real-time-factor study takes the miner's device flag and rule: one table per device."""

import json

import pytest

from audionet.benchmarks import generation_rtf
from audionet.lib.errors import BackendError


def test_one_table_per_device_from_the_pool_flag(tmp_path):
    argv = ["--only", "espeak", "--runs", "1", "--pool.devices", "cpu", "--out", str(tmp_path)]
    assert generation_rtf.main(argv) == 0
    (stem,) = {p.stem for p in tmp_path.iterdir()}
    assert stem.startswith("generation-rtf-cpu")
    (row,) = json.loads((tmp_path / f"{stem}.json").read_text())["rows"]
    assert row["backend"] == "espeak" and row["device"] == "cpu"
    assert row["audio_s"] > 0 and 0 < row["rtf"] < 10
    assert "| espeak | tts | shipped |" in (tmp_path / f"{stem}.md").read_text()


def test_a_device_that_is_not_there_is_named_with_its_flag(tmp_path):
    argv = ["--only", "espeak", "--pool.devices", "cuda:3", "--out", str(tmp_path)]
    with pytest.raises(BackendError, match="--pool.devices: device cuda:3"):
        generation_rtf.main(argv)
