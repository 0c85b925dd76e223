"""Merge `audionet-bench device-tables` results of several devices into one comparison (docs/methodology.md#per-gpu-service-tables):
one row per device and service, with a CPU-vs-GPU speed-up column when a CPU result is among the inputs,
and the quality table per device with each device's reward against the CPU's (GPU should change speed,
not quality). Writes <out>/comparison/comparison.{json,md,png}.

    audionet-bench aggregate benchmarks/results/cpu-x86_64-2core benchmarks/results/<gpu-slug> [--out DIR]
"""

from __future__ import annotations

import json
import os
import sys
from functools import partial

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import command_line, grouped_bars, pyplot, save_figure, table, write_result
from audionet.benchmarks.device_tables.quality import CROSS_DEVICE_TOLERANCE
from audionet.benchmarks.device_tables.tables import (
    QUALITY_FOOTNOTE,
    QUALITY_MEANINGLESS,
    TIMING_ONLY,
    configurations,
    device_label,
    device_table,
    quality_rows,
    sections_text,
    timing_table,
)


def load(folder: str) -> dict:
    path = os.path.join(folder, "benchmark_summary.json")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{folder} has no benchmark_summary.json (is it a device dir from audionet-bench?)")
    with open(path) as handle:
        return json.load(handle)


def cpu_baseline(summaries: list[dict]) -> dict | None:
    return next((s for s in summaries if s["device"]["kind"] == "cpu"), None)


def comparison(summaries: list[dict]) -> str:
    cpu = cpu_baseline(summaries)
    note = TIMING_ONLY if any(s.get("timing_only") for s in summaries) else None
    modes = ", ".join(sorted({s["mode"] for s in summaries}))
    head = f"Devices: {len(summaries)}; modes: {modes}. Speed-up = CPU time / device time for the same service and mode"
    head += "" if cpu else " (no CPU result among the inputs, so no speed-up)"
    sections = [
        ("Generation (miners)", timing_table(summaries, "generation", note, cpu)),
        ("Evaluation (validators)", timing_table(summaries, "evaluation", note, cpu)),
        ("Latency, throughput, memory", device_table(summaries, note)),
        ("Quality (what the validator would score)", quality_comparison(summaries)),
    ]
    return f"# audionet: per-device comparison\n\n{head}.\n\n" + sections_text(sections)


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
                rows.append([device_label(s), *row[1:], cross_device(s is reference, base.get(key), value)])
        if rows:
            parts.append(
                f"### {title}\n\n" + table(["Device", *headers[1:], f"Reward vs {device_label(reference)}"], rows, note)
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

    def ms_per_audio_s(summary: dict, service: str) -> float | None:
        result = summary["services"].get(service)
        return result["generation"]["latency_per_audio_s"]["mean"] * 1000 if result else None

    grouped_bars(ax, services, [(device_label(s), [ms_per_audio_s(s, svc) for svc in services]) for s in summaries])
    ax.set_ylabel("generation ms per 1 s of audio (lower is faster)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("audionet generation latency per device")
    return save_figure(fig, path)


def aggregate(folders: list[str], out: str, command: str) -> str:
    """The comparison of the `device-tables` result folders; its stem."""
    summaries = [load(folder) for folder in folders]
    data = {
        "devices": [device_label(s) for s in summaries],
        "folders": [os.path.basename(f.rstrip("/")) for f in folders],
    }
    plot = partial(comparison_plot, summaries)
    return write_result(out, "comparison", "comparison", data, comparison(summaries), command, plot)


def main(argv: list[str], prog: str = "audionet-bench aggregate") -> int:
    parser = study_parser(prog, __doc__, where="<out>/comparison/")
    parser.add_argument("dirs", nargs="+", help="device folders written by audionet-bench device-tables")
    args = parser.parse_args(argv)
    try:
        aggregate(args.dirs, args.out, command_line(prog, argv))
    except (FileNotFoundError, KeyError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    return 0
