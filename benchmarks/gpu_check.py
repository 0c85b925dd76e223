"""`make gpu-check`: on a GPU host, one command under 9 minutes that measures the GPU and writes
`benchmarks/results/<device-slug>/`:

  tts-random, music-random, vc-random  audionet-bench per service on cuda:0 with the full-size
                                       architectures and random weights (VITS/MMS-TTS, MusicGen-small,
                                       Dia-1.6B: "random weights — timing only"), judged by the
                                       validator's evaluators on the GPU, parallel sweep 1/2
  offline                              Kokoro TTS and the Kokoro clone with their real shipped weights
                                       (on the GPU where onnxruntime-gpu is installed, else on the CPU:
                                       gpu_check.md says which), procedural music
  evaluation-profiles                  each evaluator's cost per clip on the GPU for the offline and
                                       standard profiles (standard: real architectures, random weights),
                                       one round of 8 answers per service, batched
  pool                                 the device pool with two replicas of one model on one GPU
                                       (--pool.devices cuda:0,cuda:0) against one replica with 2 slots

Every step is its own process with a time limit taken from what is left of the budget; a step that
runs out is recorded as timed out and the next one runs. Without a visible CUDA GPU it refuses with
one line. `--cpu-smoke` runs a small plan on the CPU (the script's own test; not a GPU check).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from audionet.benchmarks import RESULTS_DIR
from audionet.lib.config import Parser

BUDGET_S = 520.0  # under 9 minutes with start-up and the final report
HEARTBEAT_S = 15.0
MIN_STEP_S = 1.0  # less left than this: the remaining steps are skipped
RANDOM = ["--weights", "random", "--mode", "quick", "--runs", "2", "--warmup", "1", "--parallel", "1,2"]
RANDOM += ["--sweep-rounds", "1"]


@dataclass(frozen=True)
class Step:
    name: str
    limit_s: float  # its own ceiling; what is left of the budget may cut it shorter
    argv: tuple[str, ...]  # after `python -m`


def bench(name: str, limit: float, *flags: str) -> Step:
    return Step(name, limit, ("audionet.benchmarks.run", *flags))


def gpu_plan() -> list[Step]:
    one = ["--pool.devices", "cuda:0"]
    return [
        bench("tts-random", 60, *one, *RANDOM, "--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng"),
        bench("music-random", 100, *one, *RANDOM, "--services", "music", "--music.model", "hf:facebook/musicgen-small"),
        bench("vc-random", 110, *one, *RANDOM, "--services", "vc", "--vc.model", "hf:nari-labs/Dia-1.6B-0626"),
        bench(
            "offline",
            70,
            *one,
            *("--runs", "3", "--warmup", "1", "--parallel", "1,2", "--sweep-rounds", "1"),
            *("--tts.model", "kokoro:", "--vc.model", "kokoro-clone:", "--music.model", "baseline:synth"),
        ),
        Step(
            "evaluation-profiles",
            90,
            ("audionet.benchmarks.profile_cost", "--profiles", "offline,standard", "--weights", "random")
            + ("--eval.device", "cuda:0", "--clips", "8", "--runs", "2"),
        ),
        bench(
            "pool",
            80,
            *("--pool.devices", "cuda:0,cuda:0", "--pool.parallel", "1", "--weights", "random", "--no-eval"),
            *("--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng", "--runs", "2", "--warmup", "1"),
            *("--parallel", "1,2", "--sweep-rounds", "2", "--batches", "1,2,4,8", "--batch-rounds", "2"),
        ),
    ]


def smoke_plan() -> list[Step]:
    quick = ["--services", "tts", "--runs", "1", "--warmup", "0", "--no-eval", "--parallel", ""]
    return [
        bench("tts", 120, "--pool.devices", "cpu", *quick),
        bench("pool", 120, "--pool.devices", "cpu,cpu", *quick, "--batches", "1,2", "--batch-rounds", "1"),
    ]


def facts() -> dict:
    from audionet.benchmarks.run import environment
    from audionet.lib.gpu import describe

    try:
        import onnxruntime

        providers = onnxruntime.get_available_providers()
    except ImportError:
        providers = []
    return {"device": describe().as_dict(), "environment": environment(), "onnxruntime_providers": providers}


def run_step(step: Step, limit: float, folder: str, say) -> dict:
    """Run one step with its output in `folder`/<step>/ and its log beside; kill its process group on time."""
    out = os.path.join(folder, step.name)
    log_path = os.path.join(folder, f"{step.name}.log")
    command = [sys.executable, "-m", *step.argv, "--out", out]
    started = time.monotonic()
    deadline = started + limit
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        while True:
            wait = min(HEARTBEAT_S, deadline - time.monotonic())
            if wait <= 0:
                os.killpg(process.pid, signal.SIGKILL)  # the step's own process group, started above
                process.wait()
                status = "timed out"
                break
            try:
                code = process.wait(timeout=wait)
                status = "ok" if code == 0 else f"failed (exit {code})"
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() < deadline:
                    say(f"   ... {time.monotonic() - started:.0f} s: {last_line(log_path)}")
    return {
        "step": step.name,
        "status": status,
        "seconds": round(time.monotonic() - started, 1),
        "limit_s": round(limit, 1),
        "command": " ".join(["python -m", *step.argv]),
        "log": os.path.basename(log_path),
    }


def last_line(path: str) -> str:
    with open(path, "rb") as handle:
        lines = [line.strip() for line in handle.read()[-4000:].decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][-120:] if lines else "(no output yet)"


def report(result: dict) -> str:
    from audionet.benchmarks.tables import table

    device, env = result["device"], result["environment"]
    rows = [[s["step"], s["status"], s["seconds"], s["limit_s"], f"`{s['command']}`"] for s in result["steps"]]
    lines = [f"# make gpu-check: {device['name']} (`{device['slug']}`)", ""]
    if result["plan"] != "gpu":
        lines += ["**cpu-smoke plan**: the script's own test on a CPU, not a GPU check.", ""]
    lines += [
        f"Compute capability {device.get('compute_capability') or 'n/a'}, {device.get('memory_total_gb')} GB, "
        f"driver {device.get('driver')}; torch {env.get('torch')} (CUDA {env.get('cuda')}). "
        f"Budget {result['budget_s']:.0f} s, used {result['total_s']:.0f} s.",
        "",
    ]
    if result["plan"] == "gpu":
        where = (
            "the GPU (onnxruntime CUDA provider)"
            if "CUDAExecutionProvider" in result["onnxruntime_providers"]
            else "the CPU: this onnxruntime has no CUDA provider (pip install onnxruntime-gpu, docs/gpu-hosts.md)"
        )
        lines += [
            f"Kokoro ran on {where}. VITS, MusicGen and Dia use random weights: their timings are real, "
            "their quality numbers are not.",
            "",
        ]
    return "\n".join(lines) + table(["Step", "Status", "Seconds", "Limit (s)", "Command"], rows)


def main(argv=None) -> int:
    parser = Parser(prog="gpu-check", description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for every step together")
    parser.add_argument("--out", default=RESULTS_DIR, help="results root: files go to <out>/<device-slug>/")
    parser.add_argument("--cpu-smoke", action="store_true", help="a small plan on the CPU (the script's own test)")
    args = parser.parse_args(argv)
    import torch

    if not args.cpu_smoke and not torch.cuda.is_available():
        print(
            "gpu-check: no CUDA GPU is visible here (torch.cuda.is_available() is False); run it on a GPU host",
            file=sys.stderr,
        )
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    began = time.monotonic()
    result = {**facts(), "budget_s": args.budget, "plan": "cpu-smoke" if args.cpu_smoke else "gpu", "steps": []}
    folder = os.path.join(args.out, result["device"]["slug"])
    os.makedirs(folder, exist_ok=True)
    plan = smoke_plan() if args.cpu_smoke else gpu_plan()
    for n, step in enumerate(plan, 1):
        left = args.budget - (time.monotonic() - began)
        if left < MIN_STEP_S:
            skipped = {"step": step.name, "status": "skipped (budget spent)", "seconds": 0, "limit_s": 0, "log": None}
            result["steps"].append({**skipped, "command": " ".join(["python -m", *step.argv])})
            print(f"[{n}/{len(plan)}] {step.name}: skipped, the budget is spent", flush=True)
            continue
        limit = min(step.limit_s, left)
        print(
            f"[{n}/{len(plan)}] {step.name} (limit {limit:.0f} s; {left:.0f} s of {args.budget:.0f} s left)", flush=True
        )
        outcome = run_step(step, limit, folder, lambda line: print(line, flush=True))
        print(f"   {outcome['status']} in {outcome['seconds']:.0f} s", flush=True)
        result["steps"].append(outcome)
    result["total_s"] = round(time.monotonic() - began, 1)
    with open(os.path.join(folder, "gpu_check.json"), "w") as handle:
        json.dump(result, handle, indent=2)
    with open(os.path.join(folder, "gpu_check.md"), "w") as handle:
        handle.write(report(result))
    print(f"results in {folder} ({result['total_s']:.0f} s)")
    return 0 if all(step["status"] == "ok" for step in result["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
