"""make gpu-check: one line and nothing written without a GPU; its orchestration (steps, budget, report)
through the small CPU plan, including a budget that runs out."""

import os

import pytest
import torch

from audionet.benchmarks import gpu_check
from tests.files import load_json, read_text

pytestmark = pytest.mark.timeout(300)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible: make gpu-check runs for real")
def test_without_a_gpu_it_refuses_with_one_line_and_writes_nothing(tmp_path, capsys):
    assert gpu_check.main(["--out", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("gpu-check: no CUDA GPU is visible")
    assert os.listdir(tmp_path) == []


def test_the_cpu_smoke_plan_runs_every_step_and_reports(tmp_path):
    assert gpu_check.main(["--cpu-smoke", "--out", str(tmp_path)]) == 0
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    result = load_json(os.path.join(folder, "gpu_check.json"))
    assert [s["status"] for s in result["steps"]] == ["ok", "ok"] and result["plan"] == "cpu-smoke"
    assert result["total_s"] <= result["budget_s"]
    assert any(name.startswith("pool-") for name in os.listdir(os.path.join(folder, "pool")))
    assert "cpu-smoke plan" in read_text(os.path.join(folder, "gpu_check.md"))


def test_a_spent_budget_kills_the_running_step_and_skips_the_rest(tmp_path):
    assert gpu_check.main(["--cpu-smoke", "--budget", "2", "--out", str(tmp_path)]) == 1  # less than its imports
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    steps = load_json(os.path.join(folder, "gpu_check.json"))["steps"]
    assert [s["status"] for s in steps] == ["timed out", "skipped (budget spent)"]
    assert steps[0]["seconds"] < 3.0
