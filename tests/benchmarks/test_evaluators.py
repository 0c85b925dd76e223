"""The evaluation-cost study: per profile, every evaluator the profile runs is a row and the whole Judge call
bounds them; one by one, each offline evaluator batched and not, and the speaker encoders' separation; the
table, JSON and plot are written with the command that regenerates them."""

import json

import pytest

from audionet.benchmarks.evaluators import main as evaluators
from audionet.lib.core.devices import device_slug


@pytest.mark.slow
def test_profiles_and_one_by_one(tmp_path, capsys):
    argv = ["--profiles", "offline", "--services", "tts,music", "--clips", "2", "--runs", "1", "--out", str(tmp_path)]
    assert evaluators.main(argv) == 0
    stem = tmp_path / device_slug("cpu") / "evaluators"
    result = json.loads(stem.with_suffix(".json").read_text())
    assert result["command"].startswith("audionet-bench evaluators --profiles offline")
    assert not result["random"] and stem.with_suffix(".png").stat().st_size > 0
    rows_of = result["profiles"]["rows"]
    music_stages = {"music_quality", "vad", "sounds", "content", "tags"}
    for service, stages in (("tts", {"asr", "mos/distillmos", "vad", "duplicates"}), ("music", music_stages)):
        rows = {r["stage"]: r["s_per_clip"] for r in rows_of if r["service"] == service}
        assert stages <= set(rows) and "clap" not in rows and "aesthetics" not in rows, service
        assert rows["total"] >= sum(v for k, v in rows.items() if k != "total") > 0
    calls = {r["evaluator"]: r for r in result["one-by-one"]["timings"]}
    assert {"asr (whisper tiny.en int8)", "vad (silero)", "duplicates (fingerprint)"} <= set(calls)
    assert all(r["batched_s_per_clip"] > 0 and r["unbatched_s_per_clip"] > 0 for r in calls.values())
    separation = {r["encoder"]: r for r in result["one-by-one"]["separation"]}
    assert separation["dvector"]["same_mean"] > separation["dvector"]["different_mean"]
    out = capsys.readouterr().out
    assert "| asr | " in out and "## Speaker encoders" in out


def test_one_part_only_and_the_offline_profile_keeps_its_shipped_weights(tmp_path):
    argv = ["--parts", "profiles", "--profiles", "offline", "--services", "music", "--clips", "1", "--runs", "1"]
    cache = tmp_path / "random-weights"
    assert evaluators.main([*argv, "--weights", "random", "--cache-dir", str(cache), "--out", str(tmp_path)]) == 0
    stem = tmp_path / device_slug("cpu") / "evaluators"
    result = json.loads(stem.with_suffix(".json").read_text())
    assert "profiles" in result and "one-by-one" not in result
    assert not result["random"] and not cache.exists()  # nothing random was built: offline's real cost
    audio_s = result["profiles"]["audio_s"]["music"]
    total = next(r["s_per_clip"] for r in result["profiles"]["rows"] if r["stage"] == "total")
    assert f"| real time ({audio_s:.1f} s clips) | {audio_s / total:.1f}x |" in stem.with_suffix(".md").read_text()


def test_the_defence_is_timed_beside_the_judge_it_replaced(tmp_path):
    argv = ["--parts", "profiles", "--profiles", "offline", "--services", "tts,music", "--clips", "1", "--runs", "1"]
    assert evaluators.main([*argv, "--undefended", "--out", str(tmp_path)]) == 0
    stem = tmp_path / device_slug("cpu") / "evaluators-defence"
    part = json.loads(stem.with_suffix(".json").read_text())["profiles"]
    assert part["columns"] == ["offline", "offline undefended"]
    stages = {
        (r["profile"], r["service"]): {
            s["stage"] for s in part["rows"] if (s["profile"], s["service"]) == (r["profile"], r["service"])
        }
        for r in part["rows"]
    }
    # the defence's own pieces run in the deployed Judge only: the naturalness student and the music floor
    assert "mos/student" in stages["offline", "tts"] and "mos/student" not in stages["offline undefended", "tts"]
    assert "music_floor" in stages["offline", "music"] and "music_floor" not in stages["offline undefended", "music"]
    # the music's content from the signal in the deployed Judge, from basic-pitch's notes in the one before
    assert "content" in stages["offline", "music"] and "notes" not in stages["offline", "music"]
    assert "notes" in stages["offline undefended", "music"]
    text = stem.with_suffix(".md").read_text()
    assert text.count("the defence costs") == 2 and "| evaluator (s/clip) | offline | offline undefended |" in text
    assert not (tmp_path / device_slug("cpu") / "evaluators.json").exists()  # the profiles' own file is left alone
