"""The per-profile evaluation cost benchmark: every evaluator the profile runs is a row, the
whole Judge call bounds them, and the table, JSON and plot are written."""

import json

from audionet.benchmarks import profile_cost


def test_offline_profile_cost_rows(tmp_path, capsys):
    argv = ["--profiles", "offline", "--services", "tts,music", "--clips", "2", "--runs", "1", "--out", str(tmp_path)]
    assert profile_cost.main(argv) == 0
    (stem,) = {p.stem for p in tmp_path.iterdir()}
    result = json.loads((tmp_path / f"{stem}.json").read_text())
    assert not result["random"] and (tmp_path / f"{stem}.png").stat().st_size > 0
    for service, stages in (("tts", {"asr", "mos/dnsmos", "vad", "duplicates"}), ("music", {"music_quality", "vad"})):
        rows = {r["stage"]: r["s_per_clip"] for r in result["rows"] if r["service"] == service}
        assert stages <= set(rows) and "clap" not in rows and "aesthetics" not in rows, service
        assert rows["total"] >= sum(v for k, v in rows.items() if k != "total") > 0
    assert "| asr | " in capsys.readouterr().out
