"""Markdown tables from a benchmark summary: BittAudio's per-GPU format (docs/methodology.md#validator-evaluation-tables: per service average /
max / min seconds and audio duration, for generation and evaluation), seed
000 (latency per audio second, throughput, memory, compute capability; the
quality table and quality versus speed per preset), the per-stage breakdown
and the parallel sweep (docs/methodology.md#parallel-requests-per-gpu)."""

from __future__ import annotations

from typing import Optional

from audionet.benchmarks.common.results import num, table
from audionet.benchmarks.device_tables.quality import REWARD, determinism_text

TIMING_ONLY = "**random weights — timing only** (full-size architectures, output is noise)"
QUALITY_MEANINGLESS = (
    "**random weights — quality numbers are meaningless** (the format is exercised; "
    "real quality comes from backends with real weights)"
)
DIGITS = {"mos": 2, "f0_rmse_hz": 1, "f0_offset_st": 2}


def memory_text(memory: dict, device: dict) -> str:
    if memory.get("peak_torch_gb") is not None or memory.get("peak_nvml_used_gb") is not None:
        return f"{num(memory.get('peak_torch_gb'), 2)} GB torch / {num(memory.get('peak_nvml_used_gb'), 2)} GB device"
    return f"{num(memory.get('peak_rss_gb'), 2)} GB RSS (CPU)"


def device_label(summary: dict) -> str:
    device = summary["device"]
    name = f"CPU {device['name']} ({device['cpu_cores']} cores)" if device["kind"] == "cpu" else device["name"]
    return name + (" (random weights — timing only)" if summary.get("timing_only") else "")


def speedup(summary: dict, cpu: Optional[dict], service: str, part: str) -> str:
    """CPU mean time / this device's mean time for the same service (same mode)."""
    if cpu is summary:
        return "baseline"
    if cpu is None or service not in cpu["services"] or cpu["mode"] != summary["mode"]:
        return "-"
    mine = (summary["services"][service].get(part) or {}).get("stats", {}).get("mean")
    theirs = (cpu["services"][service].get(part) or {}).get("stats", {}).get("mean")
    return f"{theirs / mine:.1f}x" if mine and theirs else "-"


def timing_table(summaries: list[dict], part: str, note: Optional[str], cpu: Optional[dict] = None) -> str:
    """Seed 003: per service average / CI / max / min seconds and audio duration of `part` (generation or
    evaluation); with several devices, a Device column and the speed-up against the CPU's."""
    many = len(summaries) > 1
    rows = []
    for summary in summaries:
        for name, r in summary["services"].items():
            part_ = r.get(part)
            if not part_:
                continue
            stats = part_["stats"]
            what = r["model"] if part == "generation" else part_["label"]
            cells = [r["title"], what, num(stats["mean"]), f"± {num(stats['ci95'])}", num(stats["max"])]
            cells += [num(stats["min"]), num(part_["audio_seconds"], 1), f"{stats['n']} ({stats['outliers']})"]
            rows.append([device_label(summary), *cells, speedup(summary, cpu, name, part)] if many else cells)
    if not rows:
        return f"No {part} timings.\n"
    average = "Average Time (s)" if part == "generation" else "Average Evaluation Time (s)"
    headers = ["Service", "Model" if part == "generation" else "Evaluator", average, "95% CI (s)"]
    headers += ["Maximum Time (s)", "Minimum Time (s)", "Duration of Audio (s)", "Runs (outliers)"]
    return table(["Device", *headers, "Speed-up vs CPU"] if many else headers, rows, note)


def device_table(summaries: list[dict], note: Optional[str]) -> str:
    """Seed 000: latency per audio second, throughput, memory, compute capability, real-time factor."""
    rows = []
    for summary in summaries:
        device = summary["device"]
        for r in summary["services"].values():
            g = r["generation"]
            per_audio, sweep, rtf = g["latency_per_audio_s"], r.get("sweep") or {}, g["rtf"]
            best_rps = max((row["throughput_rps"] for row in sweep.get("rows", [])), default=g["sequential_rps"])
            name = device_label(summary) if len(summaries) > 1 else device["name"]
            latency = f"{num(per_audio['mean'] * 1000, 1)} ms ± {num(per_audio['ci95'] * 1000, 1)}"
            cells = [name, r["title"], latency, num(best_rps, 2), memory_text(r["memory"], device)]
            cells += [device.get("compute_capability") or "n/a (CPU)", f"{num(rtf)}x RT"]
            rows.append(cells + [f"{num(1 / rtf if rtf else None, 1)}x", str(sweep.get("recommended_parallel", "-"))])
    headers = ["Device", "Service", "Latency per 1 s of audio", "Throughput (req/s)", "Peak memory"]
    headers += ["Compute Capability", "Real-time factor", "Faster than real time", "Recommended parallel"]
    return table(headers, rows, note)


PRESET_ORDER = {"fast": 0, "balanced": 1, "quality": 2}


def configurations(result: dict) -> list[tuple[str, dict]]:
    """(preset, result) for the main run and every measured preset, fast -> quality."""
    rows = [(result.get("preset") or "-", result)]
    rows += list(((result.get("presets") or {}).get("measured") or {}).items())
    return sorted(rows, key=lambda row: PRESET_ORDER.get(row[0], -1))


def mean_ci(stats: Optional[dict], digits: int) -> str:
    return "-" if not stats else f"{num(stats['mean'], digits)} ± {num(stats['ci95'], digits)}"


def quality_rows(summary: dict, service: str) -> tuple[list[str], list[list[str]], list[str]]:
    """Headers, one row per backend/preset of `service`, and its determinism lines (also used by
    the multi-device comparison)."""
    r = summary["services"][service]
    metrics = [*map(tuple, r["metrics"]), REWARD]
    rows, checks = [], []
    for preset, c in configurations(r):
        q = c["quality"]
        rows.append(
            [summary["device"]["name"], c["model"], preset]
            + [mean_ci(q["summary"].get(key), DIGITS.get(key, 3)) for key, _ in metrics]
            + [f"{q['gated_clips']} of {q['clips']}", str(len(q["runs"]))]
        )
        checks.append(f"{r['title']} {c['model']} ({preset}): {determinism_text(q.get('determinism'))}")
    return ["Device", "Model", "Preset", *[title for _, title in metrics], "Gated clips", "Runs"], rows, checks


QUALITY_FOOTNOTE = (
    "Mean ± 95% CI over runs (t-distribution, all runs; a run's value is the mean over its clips). "
    "Reward is the validator's score of the clip, what its EMA sees; a gated clip scores 0 and "
    "has no components."
)


def quality_tables(summary: dict, note: Optional[str]) -> str:
    parts, checks = [], []
    for service, r in summary["services"].items():
        if r.get("quality"):
            headers, rows, lines = quality_rows(summary, service)
            parts.append(f"### {r['title']}\n\n" + table(headers, rows, note))
            checks += lines
    if not parts:
        return "Not measured (--no-eval).\n"
    return (
        "\n".join(parts)
        + f"\n{QUALITY_FOOTNOTE} Determinism (same seeds, generated and judged twice):\n\n"
        + "".join(f"- {line}\n" for line in checks)
    )


def quality_speed_table(summary: dict, note: Optional[str]) -> str:
    rows, without = [], []
    for r in summary["services"].values():
        unmeasured = (r.get("presets") or {}).get("note")  # set exactly when no preset was measured
        if unmeasured:
            without.append(f"{r['title']} ({r['model']}): {unmeasured}")
        for preset, c in configurations(r):
            g, reward = c["generation"], c["quality"]["summary"].get("reward") if c.get("quality") else None
            speed = [f"{num(g['rtf'])}x RT", mean_ci(g["latency_per_audio_s"], 3), mean_ci(reward, 3)]
            rows.append([r["title"], c["model"], preset, *speed])
    headers = ["Service", "Model", "Preset", "Real-time factor", "Seconds per audio second (± 95% CI)"]
    out = table([*headers, "Reward (raw, 0-1)"], rows, note)
    return out + "".join(f"\n- {line}" for line in without) + ("\n" if without else "")


def stage_table(summary: dict, note: Optional[str]) -> str:
    rows = []
    for r in summary["services"].values():
        for part in ("generation", "evaluation"):
            total = sum((r.get(part) or {}).get("runs_s") or [])
            for stage, s in ((r.get(part) or {}).get("stages") or {}).items():
                share = "-" if not total else f"{s['avg_s'] * s['count'] / total:.0%}"
                rows.append([r["title"], stage, s["count"], num(s["avg_s"], 4), num(s["p95_s"], 4), share])
    unstaged = [
        f"{r['title']} ({r['model']})" for r in summary["services"].values() if not r["generation"].get("stages")
    ]
    tail = "\nGeneration backends without stages (`Backend.stage`), timed as whole requests only: "
    tail = f"{tail}{', '.join(unstaged)}.\n" if unstaged else ""
    if not rows:
        return tail.lstrip("\n") or "No stages.\n"
    return table(["Service", "Stage", "Count", "Average (s)", "p95 (s)", "Share of its total"], rows, note) + tail


SWEEP_HEADERS = ["Parallel requests", "Requests", "Throughput (req/s)"]


def sweep_cells(sweep: dict) -> list[list]:
    """Per level of a parallel sweep: the count (marked where recommended), requests, throughput (the
    columns of SWEEP_HEADERS), then the audio seconds per second and the latency."""
    rows = []
    for row in sweep["rows"]:
        mark = " ← recommended" if row["parallel"] == sweep["recommended_parallel"] else ""
        cells = [f"{row['parallel']}{mark}", row["requests"], num(row["throughput_rps"], 2)]
        rows.append(cells + [num(row["audio_s_per_s"], 2), mean_ci(row["latency"], 3), num(row["latency_p95_s"])])
    return rows


def sweep_table(summary: dict, note: Optional[str]) -> str:
    sweeps = [(r["title"], r["sweep"]) for r in summary["services"].values() if r.get("sweep")]
    rows = [[title, *cells] for title, sweep in sweeps for cells in sweep_cells(sweep)]
    if not rows:
        return "Parallel sweep not run.\n"
    headers = ["Service", *SWEEP_HEADERS, "Audio s per s", "Latency mean ± 95% CI (s)", "Latency p95 (s)"]
    return table(headers, rows, note)


def render(summary: dict) -> str:
    note = TIMING_ONLY if summary.get("timing_only") else None
    quality_note = QUALITY_MEANINGLESS if summary.get("timing_only") else None
    device, load = summary["device"], summary.get("load_average")
    head = [f"Regenerate: `{summary['command']}`", f"# audionet benchmark: {device['name']} (`{summary['slug']}`)"]
    if note:
        head.append(note)
    if summary.get("simulated"):
        from audionet.benchmarks.common.simulated import NOTE

        head.append(NOTE)
    head.append(
        f"Mode **{summary['mode']}**, {summary['runs']} runs after {summary['warmup']} warm-up run(s), "
        f"weights: {summary['weights']}. CPU: {device['cpu_model']}, {device['cpu_cores']} cores. "
        f"Evaluation ({summary.get('eval_profile', 'offline')} profile): {summary.get('evaluation') or 'not run'}."
    )
    if load:
        # Only the start says whether other work was running: by the end the benchmark's own parallel
        # sweep has raised the load.
        busy = load["start"][0] > 0.5 * device["cpu_cores"]
        head.append(
            f"Load average (1 min) at start / end: {load['start'][0]:.1f} / {load['end'][0]:.1f} on "
            f"{device['cpu_cores']} cores"
            + (
                ": other work was running at the start, expect noise."
                if busy
                else " (the end includes the benchmark's own sweep)."
            )
        )
    sections = [
        ("Generation (miners)", timing_table([summary], "generation", note)),
        ("Evaluation (validators)", timing_table([summary], "evaluation", note)),
        ("Latency, throughput, memory", device_table([summary], note)),
        ("Quality (what the validator would score)", quality_tables(summary, quality_note)),
        ("Quality versus speed (presets)", quality_speed_table(summary, quality_note)),
        ("Per-stage breakdown", stage_table(summary, note)),
        ("Parallel requests per device", sweep_table(summary, note)),
        ("Methodology", METHODOLOGY),
    ]
    return "".join(f"{line}\n\n" for line in head) + sections_text(sections)


def sections_text(sections: list[tuple[str, str]]) -> str:
    """`## title` and its body, for each section (every report's layout)."""
    return "\n".join(f"## {title}\n\n{body}" for title, body in sections)


METHODOLOGY = """\
- One run = every request of the mode's workload (quick 5 s, medium 30 s, full 60 s of audio), generated back to
  back; a target longer than one request allows (30 s, 400 characters) is split into equal requests.
- Warm-up runs are excluded. Mean ± 95% CI uses the t-distribution over the runs that are not outliers
  (modified z-score > 3.5, counted in "Runs (outliers)"); min and max are over all runs; raw times are in
  `benchmark_summary.json`.
- Real-time factor (RT) = compute seconds / audio seconds (below 1 is faster than playback); "faster than real
  time" is its inverse.
- Throughput is the best of the parallel sweep (else sequential). Peak memory: torch `max_memory_allocated` and
  NVML device memory sampled every 150 ms on a GPU; on a CPU the process's peak RSS so far (it grows
  through the run: it includes every model loaded for earlier services).
"""
