"""gpu-check's tables, gathered from what its steps wrote under <out>/<device-slug>/<step>/ and written as
gpu-tables.{json,md} after every step: generation and evaluation per service in seed 003's format (average,
maximum and minimum seconds and the audio's duration), latency per audio second, throughput, peak memory and
compute capability in seed 000's, and the parallel requests in seed 001's (server and client parallel counts,
the duration and every request's time). On a GPU each row is also a ratio to seed 003's H100 figure for the
same service (per second of audio for generation, per clip for evaluation) and says whether issue 44's target
is met; a CPU rehearsal gets neither (its times are no GPU's). The Markdown is a function of the JSON alone.
"""

from __future__ import annotations

import glob
import json
import os

from audionet.benchmarks.common.results import num, table, write_result
from audionet.benchmarks.common.targets import GENERATION_TARGETS, GOAL_S_PER_CLIP, H100_EVALUATION, H100_GENERATION
from audionet.benchmarks.generation.report import RANDOM as RANDOM_NOTE  # the one label of random-weight rows

NAME = "gpu-tables"
TITLES = {"music": "Music Generation", "tts": "Text To Speech", "vc": "Voice Clone"}  # seed 003's service names


def _load(pattern: str) -> list[tuple[str, dict]]:
    """(step, data) for every file matching <folder>/<step>/<any>/<name>, in step order of writing."""
    found = []
    for path in sorted(glob.glob(pattern), key=os.path.getmtime):
        with open(path) as handle:
            found.append((path.split(os.sep)[-3], json.load(handle)))
    return found


def collect(folder: str) -> dict:
    """Every step's rows, flattened: generation, failed rows, evaluation, parallel sweeps and bursts."""
    data: dict = {"generation": [], "failed": [], "evaluation": [], "sweeps": [], "bursts": []}
    for step, result in _load(os.path.join(folder, "*", "*", "generation.json")):
        for r in result["rows"]:
            if "error" in r:
                data["failed"].append({"step": step, "backend": r["backend"], "error": r["error"]})
                continue
            speed = {"mean_s": r["gen_s_mean"], "min_s": r["gen_s_min"], "max_s": r["gen_s_max"], "rps": None}
            data["generation"].append(
                {"step": step, "service": r["service"], "model": r["backend"], "weights": r["weights"]}
                | speed
                | {"audio_s": r["audio_s"], "runs": r["runs"], "peak_gb": r.get("peak_gb")}
            )
    for step, summary in _load(os.path.join(folder, "*", "*", "benchmark_summary.json")):
        weights = RANDOM_NOTE if summary.get("timing_only") else summary["weights"]
        for name, r in summary["services"].items():
            g, sweep = r["generation"], r.get("sweep") or {}
            rps = max((row["throughput_rps"] for row in sweep.get("rows", [])), default=g["sequential_rps"])
            speed = {"mean_s": g["stats"]["mean"], "min_s": g["stats"]["min"], "max_s": g["stats"]["max"], "rps": rps}
            model = os.path.basename(r["model"]) if os.path.isabs(r["model"]) else r["model"]  # a stand-in's folder
            data["generation"].append(
                {"step": step, "service": name, "model": model, "weights": weights}
                | speed
                | {"audio_s": g["audio_seconds"], "runs": g["stats"]["n"], "peak_gb": r["memory"].get("peak_torch_gb")}
            )
            data["sweeps"] += _sweep_rows(step, name, summary["slug"], sweep)
    for step, result in _load(os.path.join(folder, "*", "*", "evaluators.json")):
        part = result.get("profiles") or {"rows": []}
        for r in (r for r in part["rows"] if r["stage"] == "total"):
            spec = part["specs"][r["profile"]]
            data["evaluation"].append(
                {"step": step, "service": r["service"], "profile": r["profile"], "random": part["random"]}
                | {"mean_s": r["s_per_clip"], "min_s": r.get("min_s_per_clip"), "max_s": r.get("max_s_per_clip")}
                | {"audio_s": part["audio_s"][r["service"]], "clips": result["clips"], "runs": result["runs"]}
                | {"evaluators": {kind: value for kind, value in spec.items() if value != "none"}}
            )
    for step, pool in _load(os.path.join(folder, "*", "pool-*", "pool.json")):
        # the pool study also writes each device's own summary (read above): its sweeps are counted once
        swept = {(s["step"], s["service"], s["device"]) for s in data["sweeps"]}
        for device in pool["per_device"]:
            for name, sweep in device["sweeps"].items():
                if (step, name, device["label"]) not in swept:
                    data["sweeps"] += _sweep_rows(step, name, device["label"], sweep)
        for study in pool["studies"].values():
            data["bursts"] += [
                {"step": step, "service": study["service"], "devices": row["devices"], "parallel": row["parallel"]}
                | {"policy": row["policy"], "batch": row["batch"], "makespans_s": row["makespans_s"]}
                | {"latencies_s": row.get("latencies_s")}
                for row in study["rows"]
            ]
    return data


def _sweep_rows(step: str, service: str, device: str, sweep: dict) -> list[dict]:
    return [
        {"step": step, "service": service, "device": device, "parallel": row["parallel"], "wall_s": row["wall_s"]}
        | {"requests": row["requests"], "throughput_rps": row["throughput_rps"], "latencies_s": row.get("latencies_s")}
        for row in sweep.get("rows", [])
    ]


def per_audio_second(seconds: float, audio_s: float) -> float | None:
    return seconds / audio_s if audio_s else None


def against(row: dict, reference: tuple[float, float], on_gpu: bool, per_clip: bool = False) -> str:
    """The row's time over seed 003's H100 figure: per second of audio, or `per_clip` (evaluation: Whisper
    reads a 30 s window whatever the clip's length, so a clip is the unit there)."""
    mine = row["mean_s"] if per_clip else per_audio_second(row["mean_s"], row["audio_s"])
    theirs = reference[0] if per_clip else reference[0] / reference[1]
    if not on_gpu or mine is None:
        return "-"
    return f"{mine / theirs:.3f}x ({reference[0]:g} s per {reference[1]:g} s{' clip' * per_clip})"


def target_text(mine: float | None, limit: float, per: str, on_gpu: bool) -> str:
    """Met or not: `mine` against `limit` seconds `per` (a clip, or the target's length of audio)."""
    if not on_gpu or mine is None:
        return "-"
    return f"{'met' if mine <= limit else 'not met'} (<= {limit:g} s per {per})"


def generation_target(mine: float | None, service: str, on_gpu: bool, audio_s: float) -> str:
    """Issue 44's target for the service, from this row's time per audio second; a row of another length
    says it was scaled."""
    limit, length = GENERATION_TARGETS[service]
    text = target_text(None if mine is None else mine * length, limit, f"{length:g} s", on_gpu)
    return text + (f", scaled from {audio_s:g} s" if text != "-" and abs(audio_s - length) > 0.1 * length else "")


def markdown(data: dict) -> str:
    device, on_gpu = data["device"], data["plan"] == "gpu"
    head = [f"# GPU tables: {device['name']} (`{device['slug']}`)", ""]
    if not on_gpu:
        head += [
            f"**{data['plan']}**: the device call's plan run on a CPU with tiny stand-ins. No number here is a "
            "GPU's, so no ratio to seed 003 and no target is given.",
            "",
        ]
    head += [
        f"Compute capability {device.get('compute_capability') or 'n/a'}, {device.get('memory_total_gb')} GB, "
        f"driver {device.get('driver')}; torch {data['environment'].get('torch')} (CUDA "
        f"{data['environment'].get('cuda')}). Rows marked _{RANDOM_NOTE}_ are full-size architectures with random "
        "weights: their output is noise, their time is real. Ratios are against seed 003's H100 row for the "
        "service (below 1 is faster): per second of audio for generation, per clip for evaluation.",
        "",
    ]
    sections = [
        ("Generation (miners), seed 003's format", generation_table(data["generation"], on_gpu)),
        ("Evaluation (validators), seed 003's format", evaluation_table(data["evaluation"], on_gpu)),
        ("Latency, throughput, memory, seed 000's format", device_table(data["generation"], device)),
        ("Parallel requests, seed 001's format", parallel_text(data["sweeps"], data["bursts"])),
        ("Not measured", missing_text(data)),
    ]
    return "\n".join(head) + "\n" + "\n".join(f"## {title}\n\n{body}" for title, body in sections)


def generation_table(rows: list[dict], on_gpu: bool) -> str:
    cells = []
    for r in rows:
        mine = per_audio_second(r["mean_s"], r["audio_s"])
        cells.append(
            [TITLES.get(r["service"], r["service"]), r["model"], r["weights"], num(r["mean_s"], 2)]
            + [num(r["max_s"], 2), num(r["min_s"], 2), num(r["audio_s"], 1), r["runs"], r["step"]]
            + [
                against(r, H100_GENERATION[r["service"]], on_gpu),
                generation_target(mine, r["service"], on_gpu, r["audio_s"]),
            ]
        )
    headers = ["Service", "Model", "Weights", "Average Time (s)", "Maximum Time (s)", "Minimum Time (s)"]
    headers += ["Duration of Audio (s)", "Runs", "Step", "vs seed 003's H100", "Target (issue 44)"]
    return table(headers, cells) if cells else "No generation step finished.\n"


def evaluation_table(rows: list[dict], on_gpu: bool) -> str:
    cells = []
    for r in rows:
        evaluators = ", ".join(f"{kind} {spec}" for kind, spec in r["evaluators"].items())
        goal = target_text(r["mean_s"], GOAL_S_PER_CLIP, "clip", on_gpu)
        cells.append(
            [TITLES.get(r["service"], r["service"]), r["profile"], RANDOM_NOTE if r["random"] else "shipped"]
            + [num(r["mean_s"]), num(r["max_s"]), num(r["min_s"]), num(r["audio_s"], 1), f"{r['clips']} x {r['runs']}"]
            + [against(r, H100_EVALUATION[r["service"]], on_gpu, per_clip=True), goal, evaluators]
        )
    headers = ["Service", "Profile", "Weights", "Average Evaluation Time (s per clip)", "Maximum Time (s per clip)"]
    headers += ["Minimum Time (s per clip)", "Duration of Audio (s)", "Clips x runs", "vs seed 003's H100"]
    headers += [f"Target (<= {GOAL_S_PER_CLIP:g} s per clip)", "Evaluators"]
    note = "A round's clips judged in one batch; per clip = the round's time / its clips (min and max over runs)."
    return (table(headers, cells) + f"\n{note}\n") if cells else "No evaluation step finished.\n"


def device_table(rows: list[dict], device: dict) -> str:
    cells = []
    for r in rows:
        mine = per_audio_second(r["mean_s"], r["audio_s"])
        rps = r["rps"] if r["rps"] is not None else (1 / r["mean_s"] if r["mean_s"] else None)
        memory = f"{num(r['peak_gb'], 2)} GB" if r.get("peak_gb") is not None else "- (not a GPU)"
        cells.append(
            [device["name"], TITLES.get(r["service"], r["service"]), r["model"]]
            + [f"{num(mine * 1000 if mine else None, 1)} ms", num(rps, 2), num(1 / mine if mine else None, 1)]
            + [memory, device.get("compute_capability") or "n/a (CPU)"]
        )
    headers = ["GPU Model", "Service", "Model", "Latency (1 s audio)", "Throughput (req/s)", "Audio s per s"]
    headers += ["GPU Memory (peak)", "Compute Capability"]
    note = "Throughput: the best of the parallel sweep where a step swept, else one request at a time."
    return (table(headers, cells) + f"\n{note}\n") if cells else "No generation step finished.\n"


def times(values) -> str:
    return ", ".join(f"{v:.2f}" for v in values) if values else "-"


def parallel_text(sweeps: list[dict], bursts: list[dict]) -> str:
    lines = []
    for s in sweeps:
        lines += [
            f"### {TITLES.get(s['service'], s['service'])}: Server {s['device']} parallel={s['parallel']}, "
            f"Client parallel={s['parallel']}",
            "",
            f"- Duration: {num(s['wall_s'], 2)} s for {s['requests']} requests ({num(s['throughput_rps'], 2)} req/s)",
            f"- Times: {times(s['latencies_s'])}",
            "",
        ]
    for b in bursts:
        server = " + ".join(f"{d} parallel={p}" for d, p in zip(b["devices"], b["parallel"]))
        lines += [
            f"### {TITLES.get(b['service'], b['service'])}: Server {server} ({b['policy']}), "
            f"Client: {b['batch']} at once",
            "",
            f"- Duration: {times(b['makespans_s'])} s (one burst per round)",
            f"- Times: {times(b['latencies_s'])}",
            "",
        ]
    return "\n".join(lines) if lines else "No parallel step finished.\n"


def missing_text(data: dict) -> str:
    lines = [f"- {f['backend']} ({f['step']}): {f['error']}" for f in data["failed"]]
    lines += [
        f"- step {s['step']}: {s['status']}" + (f": {s['reason']}" if s.get("reason") else "")
        for s in data["steps"]
        if s["status"] != "ok"
    ]
    return ("\n".join(lines) + "\n") if lines else "Every step finished.\n"


def write(out: str, slug: str, result: dict, command: str) -> str:
    """<out>/<slug>/gpu-tables.{json,md} from the step outputs found there and gpu-check's `result`."""
    data = {key: result[key] for key in ("device", "environment", "plan")} | collect(os.path.join(out, slug))
    data["steps"] = [{key: s.get(key) for key in ("step", "status", "reason")} for s in result["steps"]]
    return write_result(out, slug, NAME, data, markdown(data), command)
