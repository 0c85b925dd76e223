"""The validator scale study: real signed HTTP to lightweight miners, one measured round per N; every answer
the miners splice is valid and distinct (no gate fires), every stage of the round is timed, and the table is
what its JSON renders."""

import json

import pytest

from audionet.benchmarks.validator_scale import main as scale
from audionet.benchmarks.validator_scale import report
from audionet.lib.core.devices import device_slug


@pytest.mark.slow
def test_a_round_per_n_with_every_stage_timed(tmp_path):
    argv = ["--miners", "2,3", "--services", "tts,music", "--out", str(tmp_path)]
    assert scale.main(argv) == 0
    stem = tmp_path / device_slug("cpu") / "validator-scale"
    result = json.loads(stem.with_suffix(".json").read_text())
    assert result["command"].startswith("audionet-bench validator-scale --miners 2,3")
    assert [row["miners"] for row in result["rows"]] == [2, 3]
    for row in result["rows"]:
        assert row["answers"] == 2 * row["miners"] and row["gated"] == {}, row["gated"]
        assert {"network", "decode", "gates", "duplicates", "vad", "asr", "state", "logging"} <= set(row["stages"])
        assert set(row["by_service"]) == {"tts", "music"} and row["peak_rss_mb"] > 100
        assert row["round_s"] >= row["stages"]["network"] > 0
        assert set(row["duplicates_alone_cpu_s"]) == {"tts", "music"}
        assert all(seconds > 0 for seconds in row["duplicates_alone_cpu_s"].values())
    assert stem.with_suffix(".png").stat().st_size > 0
    markdown = stem.with_suffix(".md").read_text()
    assert markdown == f"Regenerate: `{result['command']}`\n\n{report.markdown(result).rstrip()}\n"
    assert "| 3 | 6 |" in markdown and "music alone (CPU)" in markdown
