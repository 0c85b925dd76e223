"""audionet-bench end to end in quick mode with the baselines, and the
aggregation of two real result dirs."""
import math
import os

import pytest

from benchmarks import aggregate, run
from benchmarks.tables import TIMING_ONLY, parse_tables, render
from tests.files import load_json, read_text

pytestmark = pytest.mark.timeout(400)
SLUG_FILES = ("gpu_info.json", "benchmark_summary.json", "tables.md", "times.png")


def only_dir(root):
    (slug,) = os.listdir(root)
    return os.path.join(root, slug)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-a")
    code = run.main(["--services", "tts,vc,music", "--mode", "quick", "--runs", "3", "--warmup", "1",
                     "--parallel", "1,2", "--sweep-rounds", "1", "--out", str(out)])
    assert code == 0
    return only_dir(out)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-b")
    code = run.main(["--services", "tts,music", "--runs", "2", "--warmup", "1", "--parallel", "", "--no-eval",
                     "--out", str(out)])
    assert code == 0
    return only_dir(out)


def finite(cell: str) -> float:
    value = float(cell.replace("±", "").replace("x RT", "").replace("ms", "").split()[0])
    assert math.isfinite(value) and value >= 0, cell
    return value


def test_quick_run_writes_every_file_with_finite_numbers(full_run):
    for name in SLUG_FILES + ("parallel.png",):
        assert os.path.getsize(os.path.join(full_run, name)) > 0, name
    summary = load_json(os.path.join(full_run, "benchmark_summary.json"))
    info = load_json(os.path.join(full_run, "gpu_info.json"))
    assert os.path.basename(full_run) == summary["slug"] == info["slug"]
    for service in ("tts", "vc", "music"):
        result = summary["services"][service]
        gen = result["generation"]
        assert len(gen["runs_s"]) == 3 and len(gen["warmup_s"]) == 1 and all(t > 0 for t in gen["runs_s"])
        assert 3.5 <= gen["audio_seconds"] <= 7.0  # quick mode: about 5 s of audio per run
        assert min(gen["runs_s"]) <= gen["stats"]["mean"] <= max(gen["runs_s"])
        assert gen["rtf"] == pytest.approx(sum(gen["runs_s"]) / sum(gen["audio_s"]))
        evaluation = result["evaluation"]
        assert len(evaluation["runs_s"]) == 3 and all(0.0 <= s <= 1.0 for s in evaluation["scores"])
        assert [row["parallel"] for row in result["sweep"]["rows"]] == [1, 2]
        assert result["sweep"]["recommended_parallel"] in (1, 2)
    # the validator's Judge timed each evaluator through the measure contract
    assert {"evaluation/vad", "evaluation/asr", "evaluation/mos"} <= set(summary["services"]["tts"]["evaluation"]["stages"])
    # honest baselines are judged, not gated (repeated runs are not taken for copies)
    assert min(summary["services"]["tts"]["evaluation"]["scores"]) > 0.3
    assert "evaluation/speaker" in summary["services"]["vc"]["evaluation"]["stages"]
    assert summary["services"]["music"]["generation"]["audio_s"] == [5.0, 5.0, 5.0]


def test_tables_parse_in_seed_formats(full_run):
    tables = parse_tables(read_text(os.path.join(full_run, "tables.md")))
    generation, evaluation, device = tables[0], tables[1], tables[2]
    assert [row["Service"] for row in generation] == ["Text To Speech", "Voice Clone", "Music Generation"]
    for row in generation:
        avg, low, high = (finite(row[k]) for k in ("Average Time (s)", "Minimum Time (s)", "Maximum Time (s)"))
        assert low <= avg <= high and finite(row["Duration of Audio (s)"]) > 3
    assert all(finite(row["Average Evaluation Time (s)"]) >= 0 for row in evaluation)
    assert all(finite(row["Latency per 1 s of audio"]) > 0 and finite(row["Throughput (req/s)"]) > 0 for row in device)
    assert device[0]["Compute Capability"] == "n/a (CPU)"
    sweep = tables[-1]
    assert sum("recommended" in row["Parallel requests"] for row in sweep) == 3


def test_random_weights_label_every_table(full_run):
    summary = load_json(os.path.join(full_run, "benchmark_summary.json"))
    markdown = render({**summary, "timing_only": True})
    assert markdown.count(TIMING_ONLY) >= len(parse_tables(markdown)) + 1  # the header and above each table


def test_random_weights_run_builds_the_full_size_architecture_and_says_timing_only(tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert run.main(["--weights", "random", "--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng",
                     "--runs", "1", "--warmup", "0", "--parallel", "", "--no-eval", "--cache-dir", str(cache),
                     "--out", str(out)]) == 0
    (folder,) = [os.path.join(out, d) for d in os.listdir(out)]
    summary = load_json(os.path.join(folder, "benchmark_summary.json"))
    assert summary["timing_only"] and summary["services"]["tts"]["spec"].startswith(f"hf:{cache}")
    assert summary["services"]["tts"]["generation"]["audio_seconds"] > 1.0
    markdown = open(os.path.join(folder, "tables.md")).read()
    assert markdown.count(TIMING_ONLY) >= len(parse_tables(markdown)) + 1


def test_bad_flags_are_one_line(tmp_path, capsys):
    assert run.main(["--services", "tts,karaoke", "--out", str(tmp_path)]) == 2
    assert run.main(["--parallel", "1,x", "--out", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("audionet-bench: ") for line in errors)


def test_aggregate_two_result_dirs(full_run, small_run, tmp_path):
    assert aggregate.main([full_run, small_run, "--out", str(tmp_path)]) == 0
    assert os.path.getsize(tmp_path / "comparison.png") > 0
    tables = parse_tables((tmp_path / "comparison.md").read_text())
    generation = tables[0]
    assert len(generation) == 5  # 3 services from the first dir, 2 from the second
    assert [row["Speed-up vs CPU"] for row in generation[:3]] == ["baseline"] * 3
    first = load_json(os.path.join(full_run, "benchmark_summary.json"))["services"]
    second = load_json(os.path.join(small_run, "benchmark_summary.json"))["services"]
    for row, service in zip(generation[3:], ("tts", "music")):
        expected = first[service]["generation"]["stats"]["mean"] / second[service]["generation"]["stats"]["mean"]
        assert row["Speed-up vs CPU"] == f"{expected:.1f}x"
    assert len(tables[1]) == 3  # evaluation rows only where evaluation ran
    assert aggregate.main([str(tmp_path / "missing")]) == 2
