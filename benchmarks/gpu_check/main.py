"""`make gpu-check`: on a GPU host, one command under 9 minutes that measures the GPU and writes
`benchmarks/results/<device-slug>/`: the services on cuda:0 as full-size architectures with random weights
(timing only, generation only: no scoring stack is imported), the offline backends with their shipped weights,
each evaluator's cost per clip for the standard and offline profiles, and the device pool with two replicas on
one GPU (the steps: `gpu_plan`; what each measures: docs/gpu-hosts.md).

It needs no install step: on a host whose Python has torch and transformers, `PYTHONPATH=pythonpath
python -m audionet.benchmarks gpu-check` runs the checkout (pythonpath/audionet). Every step is its own
process (benchmarks/gpu_check/step.py) with a time limit taken from what is left of the budget; a step that
runs out is recorded as timed out, a step whose packages are missing as skipped with the one line that
names them, and the next one runs. Flags gpu-check does not know pass through to the steps (`route`).
Without a visible CUDA GPU it refuses with one line. `--cpu-smoke` runs a small plan on the CPU (the
script's own test; not a GPU check).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import partial

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import command_line, table, write_result
from audionet.lib.core.errors import EXIT_MISSING

BUDGET_S = 520.0  # under 9 minutes with start-up and the final report
HEARTBEAT_S = 15.0
MIN_STEP_S = 1.0  # less left than this: the remaining steps are skipped
GENERATION, EVALUATION = "generation", "evaluation"  # what a step measures, and so which flags it takes
RANDOM = ["--weights", "random", "--mode", "quick", "--runs", "2", "--warmup", "1", "--parallel", "1,2"]
RANDOM += ["--sweep-rounds", "1", "--no-eval"]
RUNNER = "audionet.benchmarks.gpu_check.step"  # runs each step's study; a missing package ends it with EXIT_MISSING


@dataclass(frozen=True)
class Step:
    name: str
    limit_s: float  # its own ceiling; what is left of the budget may cut it shorter
    argv: tuple[str, ...]  # the study and its flags (`audionet-bench` ...)
    kind: str = GENERATION


def bench(name: str, limit: float, *flags: str, study: str = "device-tables") -> Step:
    return Step(name, limit, (study, *flags))


def evaluation(name: str, limit: float, *flags: str) -> Step:
    return Step(name, limit, ("evaluators", "--parts", "profiles", *flags), EVALUATION)


def family(name: str, limit: float, label: str, *flags: str) -> Step:
    """One 2026 generation family at full size with random weights: time per 15 s of music or 30 s of
    speech, and peak GPU memory (audionet-bench generation); skipped where its package is missing."""
    return bench(name, limit, "--pool.devices", "cuda:0", "--only", label, "--runs", "2", *flags, study="generation")


def gpu_plan() -> list[Step]:
    one = ["--pool.devices", "cuda:0"]
    cost = ["--eval.devices", "cuda:0", "--clips", "8", "--runs", "2"]
    offline = ["--runs", "3", "--warmup", "1", "--parallel", "1,2", "--sweep-rounds", "1", "--no-eval"]
    offline += ["--tts.model", "kokoro:", "--vc.model", "kokoro-clone:", "--music.model", "baseline:synth"]
    pool = ["--pool.devices", "cuda:0,cuda:0", "--pool.parallel", "1", "--weights", "random", "--no-eval"]
    pool += ["--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng", "--runs", "2", "--warmup", "1"]
    pool += ["--parallel", "1,2", "--sweep-rounds", "2", "--batches", "1,2,4,8", "--batch-rounds", "2"]
    return [
        bench("tts-random", 45, *one, *RANDOM, "--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng"),
        bench("music-random", 70, *one, *RANDOM, "--services", "music", "--music.model", "hf:facebook/musicgen-small"),
        bench("vc-random", 75, *one, *RANDOM, "--services", "vc", "--vc.model", "hf:nari-labs/Dia-1.6B-0626"),
        family("music-stable-audio", 45, "Stable Audio", "--music-seconds", "15"),
        family("music-ace-step", 40, "ACE-Step", "--music-seconds", "15"),
        # the voice-clone speech LMs in turn, each row written when done: what fits in the step's time is kept
        family("vc-speech-lms", 50, "CSM,Higgs Audio,XTTS,OmniVoice,F5-TTS", "--speech-seconds", "30"),
        bench("offline", 55, *one, *offline),
        evaluation("evaluation-standard", 50, "--profiles", "standard", "--weights", "random", *cost),
        evaluation("evaluation-offline", 40, "--profiles", "offline", *cost),
        bench("pool", 50, *pool, study="pool"),
    ]


def smoke_plan() -> list[Step]:
    quick = ["--services", "tts", "--runs", "1", "--warmup", "0", "--no-eval", "--parallel", ""]
    pool = ["--pool.devices", "cpu,cpu", *quick, "--batches", "1,2", "--batch-rounds", "1"]
    return [
        bench("tts", 120, "--pool.devices", "cpu", *quick),
        bench("pool", 120, *pool, study="pool"),
        evaluation("evaluation", 150, "--profiles", "offline", "--services", "tts", "--clips", "2", "--runs", "1"),
    ]


def route(extras: list[str]) -> dict[str, list[str]]:
    """Flags gpu-check does not know -> the steps that take them: --eval.* to the evaluation steps, any
    other --<group>.<name> (with its value) to the generation steps. Anything else is a ValueError."""
    routed: dict[str, list[str]] = {GENERATION: [], EVALUATION: []}
    tokens = list(extras)
    while tokens:
        token = tokens.pop(0)
        name = token.split("=", 1)[0]
        if not name.startswith("--") or "." not in name:
            raise ValueError(f"unknown flag {token!r}; steps take --eval.* and --<group>.<name> flags")
        pair = [token] if "=" in token or not tokens or tokens[0].startswith("--") else [token, tokens.pop(0)]
        routed[EVALUATION if name.startswith("--eval.") else GENERATION] += pair
    return routed


def facts() -> dict:
    """The device, the software, and whether each CUDA path outside torch can run here (None: it can)."""
    from audionet.lib.core.cuda_libs import CTRANSLATE2, unloadable
    from audionet.lib.core.devices import describe, environment

    try:
        from audionet.models.onnx_providers import cuda_problem

        onnx = cuda_problem()
    except ImportError as error:
        onnx = f"onnxruntime does not import: {error}"
    ctranslate2 = unloadable(CTRANSLATE2)
    return {
        "device": describe().as_dict(),
        "environment": environment(),
        "cuda_paths": {
            "onnxruntime": onnx,
            "ctranslate2": f"{ctranslate2[0]} does not load (requirements-cuda12.txt)" if ctranslate2 else None,
        },
    }


def run_step(step: Step, limit: float, folder: str, say, passed: tuple[str, ...] = ()) -> dict:
    """Run one step (with the pass-through flags it takes) with its output in `folder`/<step>/ and its log
    beside; kill its process group on time."""
    out = os.path.join(folder, step.name)
    log_path = os.path.join(folder, f"{step.name}.log")
    argv = [*step.argv, *passed, "--out", out]
    command = [sys.executable, "-m", RUNNER, *argv]
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
                status = {0: "ok", EXIT_MISSING: "skipped"}.get(code, f"failed (exit {code})")
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() < deadline:
                    say(f"   ... {time.monotonic() - started:.0f} s: {last_line(log_path)}")
    return {
        "step": step.name,
        "status": status,
        "reason": None if status in ("ok", "timed out") else last_line(log_path, 400),
        "seconds": round(time.monotonic() - started, 1),
        "limit_s": round(limit, 1),
        "command": " ".join(["audionet-bench", *argv[:-2]]),
        "log": os.path.basename(log_path),
    }


def last_line(path: str, width: int = 120) -> str:
    with open(path, "rb") as handle:
        lines = [line.strip() for line in handle.read()[-4000:].decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][-width:] if lines else "(no output yet)"


def report(result: dict) -> str:
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
        onnx, ctranslate2 = result["cuda_paths"]["onnxruntime"], result["cuda_paths"]["ctranslate2"]
        lines += [
            f"Kokoro and DNSMOS ran on {'the GPU (onnxruntime CUDA provider)' if onnx is None else 'the CPU: ' + onnx}. "
            f"CTranslate2 Whisper on CUDA: {'available' if ctranslate2 is None else ctranslate2}. VITS, MusicGen "
            "and Dia use random weights: their timings are real, their quality numbers are not.",
            "",
        ]
    notes = [f"- {s['step']}: {s['status']}: {s['reason']}" for s in result["steps"] if s.get("reason")]
    table_text = table(["Step", "Status", "Seconds", "Limit (s)", "Command"], rows)
    return "\n".join(lines) + table_text + ("\n" + "\n".join(notes) + "\n" if notes else "")


def main(argv: list[str], prog: str = "audionet-bench gpu-check") -> int:
    parser = study_parser(prog, __doc__)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for every step together")
    parser.add_argument("--cpu-smoke", action="store_true", help="a small plan on the CPU (the script's own test)")
    args, extras = parser.parse_known_args(argv)
    try:
        passed = route(extras)
    except ValueError as error:
        parser.error(str(error))
    from audionet.lib.core.devices import torch_build
    from audionet.lib.core.requirements import needs

    with needs("gpu-check"):
        import torch

    if not args.cpu_smoke and not torch.cuda.is_available():
        print(f"{prog}: no CUDA GPU is visible here ({torch_build(torch)}); run it on a GPU host", file=sys.stderr)
        return 2
    return run_plan(smoke_plan() if args.cpu_smoke else gpu_plan(), args, passed, command_line(prog, argv))


def run_plan(plan: list[Step], args, passed: dict[str, list[str]], command: str) -> int:
    """Every step of `plan` within the budget; gpu_check.{json,md} in <out>/<device-slug>/."""
    began, say = time.monotonic(), partial(print, flush=True)  # progress shows as it happens, also through a pipe
    result = {**facts(), "budget_s": args.budget, "plan": "cpu-smoke" if args.cpu_smoke else "gpu", "steps": []}
    result["passed_flags"] = passed
    folder = os.path.join(args.out, result["device"]["slug"])
    os.makedirs(folder, exist_ok=True)
    for n, step in enumerate(plan, 1):
        left = args.budget - (time.monotonic() - began)
        if left < MIN_STEP_S:
            skipped = {"step": step.name, "status": "skipped (budget spent)", "seconds": 0, "limit_s": 0, "log": None}
            result["steps"].append({**skipped, "reason": None, "command": " ".join(["audionet-bench", *step.argv])})
            say(f"[{n}/{len(plan)}] {step.name}: skipped, the budget is spent")
            continue
        limit = min(step.limit_s, left)
        say(f"[{n}/{len(plan)}] {step.name} (limit {limit:.0f} s; {left:.0f} s of {args.budget:.0f} s left)")
        outcome = run_step(step, limit, folder, say, tuple(passed[step.kind]))
        reason = f": {outcome['reason']}" if outcome["reason"] else ""
        say(f"   {outcome['status']} in {outcome['seconds']:.0f} s{reason}")
        result["steps"].append(outcome)
    result["total_s"] = round(time.monotonic() - began, 1)
    write_result(args.out, result["device"]["slug"], "gpu-check", result, report(result), command)
    print(f"results in {folder} ({result['total_s']:.0f} s)")
    return 0 if all(step["status"] in ("ok", "skipped") for step in result["steps"]) else 1
