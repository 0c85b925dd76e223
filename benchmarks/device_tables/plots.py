"""PNG plots of a `device-tables` summary: time per run, the parallel sweep, quality against speed."""

from __future__ import annotations

import os

from audionet.benchmarks.common.results import pyplot
from audionet.benchmarks.common.results import save_figure as save

plt = pyplot()


def _title(summary: dict, what: str) -> str:
    tag = " — random weights, timing only" if summary.get("timing_only") else ""
    return f"{what}: {summary['device']['name']} ({summary['mode']}){tag}"


def times_plot(summary: dict, path: str) -> str:
    services = list(summary["services"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, part in zip(axes, ("generation", "evaluation")):
        rows = [(s, summary["services"][s].get(part)) for s in services]
        rows = [(s, r) for s, r in rows if r]
        means = [r["stats"]["mean"] for _, r in rows]
        errors = [r["stats"]["ci95"] for _, r in rows]
        colour = "#4C72B0" if part == "generation" else "#DD8452"
        ax.bar([s for s, _ in rows], means, yerr=errors, capsize=6, color=colour)
        for i, (_, r) in enumerate(rows):
            ax.scatter([i] * len(r["runs_s"]), r["runs_s"], s=10, color="black", zorder=3)
        ax.set_ylabel("seconds per run (mean ± 95% CI, dots = runs)")
        ax.set_title(part)
    fig.suptitle(_title(summary, "time per run"), fontsize=10)
    return save(fig, path)


def sweep_plot(summary: dict, path: str) -> str | None:
    swept = {s: r["sweep"] for s, r in summary["services"].items() if r.get("sweep")}
    if not swept:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for service, sweep in swept.items():
        levels = [row["parallel"] for row in sweep["rows"]]
        left.plot(levels, [row["throughput_rps"] for row in sweep["rows"]], marker="o", label=service)
        latency = [row["latency"] for row in sweep["rows"]]
        means, errors = [s["mean"] for s in latency], [s["ci95"] for s in latency]
        right.errorbar(levels, means, yerr=errors, marker="o", capsize=4, label=service)
    levels = sorted({row["parallel"] for sweep in swept.values() for row in sweep["rows"]})
    left.set(xlabel="requests in parallel", ylabel="throughput (req/s, log)", title="throughput", yscale="log")
    right.set_yscale("log")
    right.set(xlabel="requests in parallel", ylabel="latency (s, mean ± 95% CI, log)", title="latency")
    for ax in (left, right):
        ax.set_xticks(levels)
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle(_title(summary, "parallel sweep"), fontsize=10)
    return save(fig, path)


def quality_speed_plot(summary: dict, path: str) -> str | None:
    """Real-time factor (x, log) against the validator's raw reward (y), one point per backend and
    preset: up and to the left is better."""
    from audionet.benchmarks.device_tables.tables import configurations

    points = [
        (service, preset, c)
        for service, r in summary["services"].items()
        for preset, c in configurations(r)
        if c.get("quality") and "reward" in c["quality"]["summary"] and c["generation"]["rtf"]
    ]
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for n, service in enumerate(dict.fromkeys(p[0] for p in points)):
        mine = [(preset, c) for s, preset, c in points if s == service]
        xs = [c["generation"]["rtf"] for _, c in mine]
        rewards = [c["quality"]["summary"]["reward"] for _, c in mine]
        ys, errors = [r["mean"] for r in rewards], [r["ci95"] for r in rewards]
        style = {"fmt": "o-" if len(mine) > 1 else "o", "capsize": 4, "color": f"C{n}"}
        ax.errorbar(xs, ys, yerr=errors, **style, label=summary["services"][service]["title"])
        for (preset, c), x, y in zip(mine, xs, ys):
            label = c["model"] if preset == "-" else f"{preset}"
            ax.annotate(label, (x, y), fontsize=7, textcoords="offset points", xytext=(5, 5))
    ax.set_xscale("log")
    rtfs = [c["generation"]["rtf"] for _, _, c in points]
    ax.set_xlim(min(rtfs) / 2, max(rtfs) * 4)  # room for the labels
    ax.set(xlabel="real-time factor (compute s per audio s, log; left is faster)", ylim=(0, 1.05))
    ax.set_ylabel("validator reward (raw, mean ± 95% CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    tag = " — random weights: quality meaningless" if summary.get("timing_only") else ""
    ax.set_title(f"quality versus speed: {summary['device']['name']} ({summary['mode']}){tag}", fontsize=10)
    return save(fig, path)


def write_plots(summary: dict, folder: str) -> list[str]:
    paths = [
        times_plot(summary, os.path.join(folder, "times.png")),
        sweep_plot(summary, os.path.join(folder, "parallel.png")),
        quality_speed_plot(summary, os.path.join(folder, "quality_speed.png")),
    ]
    return [p for p in paths if p]
