"""`make gpu-check`: on a GPU host, one budgeted command that measures the GPU and writes
`benchmarks/results/<device-slug>/`: Kokoro, the standard profile's evaluators, MusicGen, Stable Audio Open,
ACE-Step, the voice-clone speech LMs and the device pool, in that order of value (`plan.gpu_plan`; what each
measures: docs/gpu-hosts.md). The families and evaluators are full-size architectures with random weights
(timing only). One device call runs it with the GPU kit: scripts/gpu_call.sh.

It needs no install step: on a host whose Python has torch and transformers, `PYTHONPATH=pythonpath
python -m audionet.benchmarks gpu-check` runs the checkout (pythonpath/audionet). Every step is its own
process (benchmarks/gpu_check/step.py) with a time limit taken from what is left of the budget; a step that
runs out is recorded as timed out, a step whose packages are missing as skipped with the one line that
names them, and the next one runs. After every step the report, the tables (gpu-tables.md, seed 003's,
000's and 001's formats) and, with `--pack DIR`, a copy of what matters are written again, so a cut run
still leaves tables. Flags gpu-check does not know pass through to the steps (`plan.route`).
Without a visible CUDA GPU it refuses with one line. `--cpu-rehearsal` runs the same plan on the CPU with
tiny stand-ins: the call's rehearsal, not a GPU check.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import command_line, table, write_result
from audionet.benchmarks.gpu_check import pack, tables
from audionet.benchmarks.gpu_check.plan import Step, gpu_plan, route
from audionet.lib.core.config import CommaList
from audionet.lib.core.errors import EXIT_MISSING

BUDGET_S = 450.0  # the steps' share of one device call of at most 8 minutes (scripts/gpu_call.sh)
HEARTBEAT_S = 15.0
MIN_STEP_S = 1.0  # less left than this: the remaining steps are skipped
RUNNER = "audionet.benchmarks.gpu_check.step"  # runs each step's study; a missing package ends it with EXIT_MISSING
GPU, REHEARSAL = "gpu", "cpu-rehearsal"


def facts() -> dict:
    """The device, the software, whether each CUDA path outside torch can run here (None: it can), and which
    CUDA libraries load (the soname or path loaded, None where it does not)."""
    from audionet.lib.core.cuda_libs import CTRANSLATE2, ONNXRUNTIME_CUDA13, load, unloadable
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
        "cuda_libraries": {lib.soname: load(lib) for lib in (*ONNXRUNTIME_CUDA13, *CTRANSLATE2)},
    }


def run_step(step: Step, limit: float, folder: str, say, passed: tuple[str, ...] = (), cache: str = "") -> dict:
    """Run one step (with the pass-through flags it takes) with its output in `folder`/<step>/ and its log
    beside; kill its process group on time. `cache`: where its random-weight stand-ins are built (removed
    after it: a full-size one is up to 14 GB on disk)."""
    out = os.path.join(folder, step.name)
    log_path = os.path.join(folder, f"{step.name}.log")
    cached = ["--cache-dir", cache] if cache else []  # every study gpu-check runs takes it
    argv = [*step.argv, *passed, *cached, "--out", out]
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
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "step": step.name,
        "status": status,
        "reason": None if status in ("ok", "timed out") else last_line(log_path, 400),
        "seconds": round(time.monotonic() - started, 1),
        "limit_s": round(limit, 1),
        "command": " ".join(["audionet-bench", *argv[: len(argv) - len(cached) - 2]]),
        "log": os.path.basename(log_path),
    }


def finished_earlier(folder: str) -> list[dict]:
    """The steps that earlier calls on this device finished, from the gpu-check.json they left (committed, so
    the next call carries it); their rows stay in the step folders beside it, which the tables read."""
    try:
        with open(os.path.join(folder, "gpu-check.json")) as handle:
            steps = json.load(handle).get("steps", [])
    except (OSError, ValueError):
        return []
    return [{**s, "earlier": True} for s in steps if s.get("status") == "ok"]


def last_line(path: str, width: int = 120) -> str:
    with open(path, "rb") as handle:
        lines = [line.strip() for line in handle.read()[-4000:].decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][-width:] if lines else "(no output yet)"


def report(result: dict) -> str:
    device, env = result["device"], result["environment"]
    rows = [
        [
            s["step"],
            s["status"] + (" (an earlier call)" if s.get("earlier") else ""),
            s["seconds"],
            s["limit_s"],
            f"`{s['command']}`",
        ]
        for s in result["steps"]
    ]
    lines = [f"# make gpu-check: {device['name']} (`{device['slug']}`)", ""]
    if result["plan"] != GPU:
        lines += [f"**{result['plan']} plan**: the GPU plan on a CPU with tiny stand-ins, not a GPU check.", ""]
    lines += [
        f"Compute capability {device.get('compute_capability') or 'n/a'}, {device.get('memory_total_gb')} GB, "
        f"driver {device.get('driver')}; torch {env.get('torch')} (CUDA {env.get('cuda')}). "
        f"Budget {result['budget_s']:.0f} s, used {result.get('total_s', 0):.0f} s"
        + ("." if "total_s" in result else " so far (the run is still going, or was cut)."),
        "",
    ]
    if result["plan"] == GPU:
        onnx, ctranslate2 = result["cuda_paths"]["onnxruntime"], result["cuda_paths"]["ctranslate2"]
        lines += [
            f"Kokoro and DNSMOS ran on {'the GPU (onnxruntime CUDA provider)' if onnx is None else 'the CPU: ' + onnx}. "
            f"CTranslate2 Whisper on CUDA: {'available' if ctranslate2 is None else ctranslate2}. The generation "
            "families and the standard evaluators use random weights: their timings are real, their quality is not.",
            "",
        ]
    libraries = result.get("cuda_libraries")
    if libraries:
        loads = [f"{name} {'loads' if found else 'does not load'}" for name, found in libraries.items()]
        lines += ["CUDA libraries: " + "; ".join(loads) + ".", ""]
    notes = [f"- {s['step']}: {s['status']}: {s['reason']}" for s in result["steps"] if s.get("reason")]
    table_text = table(["Step", "Status", "Seconds", "Limit (s)", "Command"], rows)
    return "\n".join(lines) + "\n" + table_text + ("\n" + "\n".join(notes) + "\n" if notes else "")


def main(argv: list[str], prog: str = "audionet-bench gpu-check") -> int:
    parser = study_parser(prog, __doc__)
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds for every step together")
    parser.add_argument(
        "--cpu-rehearsal", action="store_true", help="the same plan on the CPU with tiny stand-ins (the rehearsal)"
    )
    parser.add_argument("--pack", default="", help="after every step, copy what matters into this folder ($OUT)")
    names = [step.name for step in gpu_plan()]
    parser.add_argument(
        "--steps",
        type=CommaList(allowed=tuple(names), what="step"),
        default=None,
        help="only these steps, in the plan's order (default: every step an earlier call on this device did not "
        "finish, as its committed gpu-check.json says)",
    )
    args, extras = parser.parse_known_args(argv)
    try:
        passed = route(extras)
    except ValueError as error:
        parser.error(str(error))
    from audionet.lib.core.devices import torch_build
    from audionet.lib.core.requirements import needs

    with needs("gpu-check"):
        import torch

    if not args.cpu_rehearsal and not torch.cuda.is_available():
        print(f"{prog}: no CUDA GPU is visible here ({torch_build(torch)}); run it on a GPU host", file=sys.stderr)
        return 2
    plan = [step for step in gpu_plan(rehearsal=args.cpu_rehearsal) if args.steps is None or step.name in args.steps]
    return run_plan(plan, args, passed, command_line(prog, argv))


def run_plan(plan: list[Step], args, passed: dict[str, list[str]], command: str) -> int:
    """Every step of `plan` within the budget; gpu-check.{json,md} and gpu-tables.{json,md} in
    <out>/<device-slug>/, written again after every step (and packed into --pack)."""
    began, say = time.monotonic(), partial(print, flush=True)  # progress shows as it happens, also through a pipe
    kind = REHEARSAL if args.cpu_rehearsal else GPU
    result = {**facts(), "budget_s": args.budget, "plan": kind, "steps": [], "passed_flags": passed}
    slug = result["device"]["slug"]
    folder = os.path.join(args.out, slug)
    os.makedirs(folder, exist_ok=True)
    earlier = finished_earlier(folder)
    if args.steps is None:  # a device's later call measures what its earlier ones did not
        done = {s["step"] for s in earlier}
        plan = [step for step in plan if step.name not in done]
    planned = {step.name for step in plan}
    result["steps"] = [s for s in earlier if s["step"] not in planned]
    say(report(result).split("\n|")[0])  # the device, the software and the CUDA libraries, before any step
    scratch = tempfile.mkdtemp(prefix="gpu-check-weights-")
    for n, step in enumerate(plan, 1):
        left = args.budget - (time.monotonic() - began)
        if left < MIN_STEP_S:
            skipped = {"step": step.name, "status": "skipped (budget spent)", "seconds": 0, "limit_s": 0, "log": None}
            result["steps"].append({**skipped, "reason": None, "command": " ".join(["audionet-bench", *step.argv])})
            say(f"[{n}/{len(plan)}] {step.name}: skipped, the budget is spent")
            continue
        limit = min(step.limit_s, left)
        say(f"[{n}/{len(plan)}] {step.name} (limit {limit:.0f} s; {left:.0f} s of {args.budget:.0f} s left)")
        cache = os.path.join(scratch, step.name)
        outcome = run_step(step, limit, folder, say, tuple(passed[step.kind]), cache)
        reason = f": {outcome['reason']}" if outcome["reason"] else ""
        say(f"   {outcome['status']} in {outcome['seconds']:.0f} s{reason}")
        result["steps"].append(outcome)
        write(args, result, command)
    shutil.rmtree(scratch, ignore_errors=True)
    result["total_s"] = round(time.monotonic() - began, 1)
    write(args, result, command)
    print(f"results in {folder} ({result['total_s']:.0f} s)")
    return 0 if all(step["status"] in ("ok", "skipped") for step in result["steps"]) else 1


def write(args, result: dict, command: str) -> None:
    """The report and the tables as they stand, and with --pack their copy and the results folder's."""
    slug = result["device"]["slug"]
    write_result(args.out, slug, "gpu-check", result, report(result), command)
    tables.write(args.out, slug, result, command)
    if args.pack:
        try:
            pack.pack(args.out, slug, args.pack)
        except OSError as error:  # the run goes on: its files stay in <out> and its log says why
            print(f"gpu-check: could not pack into {args.pack}: {error}", flush=True)
