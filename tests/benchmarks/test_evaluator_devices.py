"""audionet-bench evaluator-devices on two SIMULATED evaluator devices (this CPU, one padded to 4x, with a floor so
the CPU's load does not decide): each alone, round-robin and the earliest-finish dispatch, side by side."""

import os

import pytest

from audionet.benchmarks.common.simulated import NOTE
from audionet.benchmarks.evaluator_devices import main as study
from audionet.lib.core.devices import device_slug
from tests.files import load_json, markdown_tables, read_text

pytestmark = pytest.mark.timeout(300)
CPU = device_slug("cpu")
FAST, SLOW = f"{CPU}-simulated-1x", f"{CPU}-simulated-4x"
# music with its cheap evaluators (signal statistics, YAMNet, the VAD): the dispatch is measured, not the models
CHEAP = ["--eval.asr", "none", "--eval.mos", "none", "--eval.tags", "none", "--eval.notes", "none"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("evaluator-devices")
    flags = ["--services", "music", "--clips", "6", "--eval.devices", "cpu,cpu", *CHEAP]
    flags += ["--simulate.slowdown", "1,4", "--simulate.floor", "0.02", "--out", str(out)]
    assert study.main(flags) == 0
    return os.path.join(out, CPU)


@pytest.mark.slow
def test_the_weighted_dispatch_beats_round_robin_and_gives_the_slow_device_less(results):
    summary = load_json(os.path.join(results, "evaluator-devices.json"))
    found = summary["findings"][0]
    assert found["weighted_s"] < found["round_robin_s"]  # side by side in one run: a ratio, not a speed
    served = found["weighted_served"]
    assert sum(served.values()) == 6 and served[SLOW] < served[FAST]
    assert found["largest_score_difference"] < 1e-6  # the same verdicts wherever a clip was judged
    robin = next(row for row in summary["rows"] if row["configuration"] == "all, round-robin")
    assert robin["served"] == {FAST: 3, SLOW: 3}


@pytest.mark.slow
def test_the_report_is_written_and_labelled_simulated(results):
    for name in ("evaluator-devices.json", "evaluator-devices.md", "evaluator-devices.png"):
        assert os.path.getsize(os.path.join(results, name)) > 0
    markdown = read_text(os.path.join(results, "evaluator-devices.md"))
    assert markdown.startswith("Regenerate: `audionet-bench evaluator-devices --services music")
    assert markdown.count(NOTE) >= 3
    makespans, findings, speeds = markdown_tables(markdown)
    assert [row["Configuration"] for row in makespans] == [
        f"{FAST} alone",
        f"{SLOW} alone",
        "all, round-robin",
        "all, weighted",
    ]
    assert [row["Device"] for row in speeds] == [FAST, SLOW] and findings[0]["Clips per service"] == "6"


def test_the_study_needs_two_devices(tmp_path, capsys):
    assert study.main(["--eval.devices", "cpu", "--services", "music", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("needs two or more --eval.devices (or simulated ones)")
