"""Merge `audionet-bench services` results of several devices into one comparison (seed 000/003 style):
one row per device and service, with a CPU-vs-GPU speed-up column when a CPU result is among the inputs,
and the quality table per device with each device's reward against the CPU's (GPU should change speed,
not quality). Writes <out>/comparison/comparison.{json,md,png}.

    audionet-bench aggregate benchmarks/results/cpu-x86_64-2core benchmarks/results/<gpu-slug> [--out DIR]
"""

from __future__ import annotations

import json
import os
import sys

from audionet.benchmarks.quality import CROSS_DEVICE_TOLERANCE
from audionet.benchmarks.results import RESULTS_DIR, command_line, num, pyplot, save_figure, table, write_result
from audionet.benchmarks.tables import (
    QUALITY_FOOTNOTE,
    QUALITY_MEANINGLESS,
    TIMING_ONLY,
    configurations,
    memory_text,
    quality_rows,
)
from audionet.lib.config import Parser


def load(folder: str) -> dict:
    path = os.path.join(folder, "benchmark_summary.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{folder} has no benchmark_summary.json (is it a device dir from audionet-bench?)")
    with open(path) as handle:
        return json.load(handle)


def cpu_baseline(summaries: list[dict]) -> dict | None:
    return next((s for s in summaries if s["device"]["kind"] == "cpu"), None)


def speedup(summary: dict, cpu: dict | None, service: str, part: str) -> str:
    """CPU mean time / this device's mean time for the same service (same mode)."""
    if cpu is summary:
        return "baseline"
    if cpu is None or service not in cpu["services"] or cpu["mode"] != summary["mode"]:
        return "-"
    mine = (summary["services"][service].get(part) or {}).get("stats", {}).get("mean")
    theirs = (cpu["services"][service].get(part) or {}).get("stats", {}).get("mean")
    return f"{theirs / mine:.1f}x" if mine and theirs else "-"


def label(summary: dict) -> str:
    device = summary["device"]
    name = f"CPU {device['name']} ({device['cpu_cores']} cores)" if device["kind"] == "cpu" else device["name"]
    return name + (" (random weights — timing only)" if summary.get("timing_only") else "")


def comparison(summaries: list[dict]) -> str:
    cpu = cpu_baseline(summaries)
    gen, ev, perf = [], [], []
    for s in summaries:
        for service, r in s["services"].items():
            g = r["generation"]["stats"]
            gen.append(
                [
                    label(s),
                    r["title"],
                    r["model"],
                    num(g["mean"]),
                    num(g["max"]),
                    num(g["min"]),
                    num(r["generation"]["audio_seconds"], 1),
                    speedup(s, cpu, service, "generation"),
                ]
            )
            if r.get("evaluation"):
                e = r["evaluation"]
                ev.append(
                    [
                        label(s),
                        r["title"],
                        num(e["stats"]["mean"]),
                        num(e["audio_seconds"], 1),
                        num(e["stats"]["max"]),
                        num(e["stats"]["min"]),
                        speedup(s, cpu, service, "evaluation"),
                    ]
                )
            sweep = r.get("sweep") or {}
            best = max(
                (row["throughput_rps"] for row in sweep.get("rows", [])), default=r["generation"]["sequential_rps"]
            )
            perf.append(
                [
                    label(s),
                    r["title"],
                    f"{num(r['generation']['latency_per_audio_s']['mean'] * 1000, 1)} ms",
                    num(best, 2),
                    memory_text(r["memory"], s["device"]),
                    s["device"].get("compute_capability") or "n/a (CPU)",
                    str(sweep.get("recommended_parallel", "-")),
                ]
            )
    note = TIMING_ONLY if any(s.get("timing_only") for s in summaries) else None
    modes = ", ".join(sorted({s["mode"] for s in summaries}))
    parts = [
        "# audionet: per-device comparison",
        "",
        f"Devices: {len(summaries)}; modes: {modes}. Speed-up = CPU time / device time for the same service and mode"
        + ("" if cpu else " (no CPU result among the inputs, so no speed-up)")
        + ".",
        "",
        "## Generation (miners)",
        "",
        table(
            [
                "Device",
                "Service",
                "Model",
                "Average Time (s)",
                "Maximum Time (s)",
                "Minimum Time (s)",
                "Duration of Audio (s)",
                "Speed-up vs CPU",
            ],
            gen,
            note,
        ),
        "## Evaluation (validators)",
        "",
        table(
            [
                "Device",
                "Service",
                "Average Evaluation Time (s)",
                "Duration of Audio (s)",
                "Maximum Time (s)",
                "Minimum Time (s)",
                "Speed-up vs CPU",
            ],
            ev,
            note,
        )
        if ev
        else "No evaluation timings.\n",
        "## Latency, throughput, memory",
        "",
        table(
            [
                "Device",
                "Service",
                "Latency per 1 s of audio",
                "Throughput (req/s)",
                "Peak memory",
                "Compute Capability",
                "Recommended parallel",
            ],
            perf,
            note,
        ),
        "## Quality (what the validator would score)",
        "",
        quality_comparison(summaries),
    ]
    return "\n".join(parts)


def reward_means(summary: dict, service: str) -> dict[tuple[str, str], float | None]:
    """(model, preset) -> mean raw reward for every configuration of one device's service, in the
    order of `quality_rows` (None where no reward was measured)."""
    r = summary["services"].get(service)
    if not r or not r.get("quality"):
        return {}
    return {
        (c["model"], preset): (c["quality"]["summary"].get("reward") or {}).get("mean")
        for preset, c in configurations(r)
    }


def quality_comparison(summaries: list[dict]) -> str:
    """Seed 000's quality table: one row per device, backend and preset, with each device's reward
    against the reference device's (the CPU when present) for the same backend and preset."""
    reference = cpu_baseline(summaries) or summaries[0]
    note = QUALITY_MEANINGLESS if any(s.get("timing_only") for s in summaries) else None
    parts = []
    titles = {name: r["title"] for s in summaries for name, r in s["services"].items()}
    for service, title in titles.items():
        headers, rows = None, []
        base = reward_means(reference, service)
        for s in summaries:
            means = reward_means(s, service)
            if not means:
                continue
            headers, mine, _ = quality_rows(s, service)
            for row, (key, value) in zip(mine, means.items()):
                rows.append([label(s), *row[1:], cross_device(s is reference, base.get(key), value)])
        if rows:
            parts.append(
                f"### {title}\n\n" + table(["Device", *headers[1:], f"Reward vs {label(reference)}"], rows, note)
            )
    if not parts:
        return "No quality measured (every input ran with --no-eval).\n"
    return "\n".join(parts) + (
        f"\n{QUALITY_FOOTNOTE} Same backend, preset and seeds on two devices should agree "
        f"within {CROSS_DEVICE_TOLERANCE:g} in mean reward: GPU kernels change the audio "
        "slightly, not what the validator thinks of it.\n"
    )


def cross_device(is_reference: bool, base: float | None, value: float | None) -> str:
    if is_reference:
        return "reference"
    if base is None or value is None:
        return "-"
    gap = value - base
    return f"{gap:+.3f} ({'within' if abs(gap) <= CROSS_DEVICE_TOLERANCE else 'OUTSIDE'} ±{CROSS_DEVICE_TOLERANCE:g})"


def comparison_plot(summaries: list[dict], path: str) -> str:
    services = sorted({svc for s in summaries for svc in s["services"]})
    fig, ax = pyplot().subplots(figsize=(max(6, 2 * len(services) * len(summaries)), 4))
    width = 0.8 / max(1, len(summaries))
    for i, s in enumerate(summaries):
        xs = [j + i * width for j, svc in enumerate(services) if svc in s["services"]]
        means = [
            s["services"][svc]["generation"]["latency_per_audio_s"]["mean"] * 1000
            for svc in services
            if svc in s["services"]
        ]
        ax.bar(xs, means, width, label=label(s))
    ax.set_xticks([j + width * (len(summaries) - 1) / 2 for j in range(len(services))], services)
    ax.set_ylabel("generation ms per 1 s of audio (lower is faster)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("audionet generation latency per device")
    return save_figure(fig, path)


def aggregate(folders: list[str], out: str, command: str) -> str:
    """The comparison of the `services` result folders; its stem."""
    summaries = [load(folder) for folder in folders]
    data = {"devices": [label(s) for s in summaries], "folders": [os.path.basename(f.rstrip("/")) for f in folders]}
    return write_result(
        out, "comparison", "comparison", data, comparison(summaries), command, lambda p: comparison_plot(summaries, p)
    )


def main(argv=None, prog: str = "audionet-bench aggregate") -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = Parser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", help="device folders written by audionet-bench services")
    parser.add_argument("--out", default=RESULTS_DIR, help="results root: files go to <out>/comparison/")
    args = parser.parse_args(argv)
    try:
        aggregate(args.dirs, args.out, command_line(prog, argv))
    except (FileNotFoundError, KeyError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
