"""PNG plots of a benchmark summary (matplotlib, Agg)."""
from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


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
        ax.bar([s for s, _ in rows], means, yerr=errors, capsize=6, color="#4C72B0" if part == "generation" else "#DD8452")
        for i, (_, r) in enumerate(rows):
            ax.scatter([i] * len(r["runs_s"]), r["runs_s"], s=10, color="black", zorder=3)
        ax.set_ylabel("seconds per run (mean ± 95% CI, dots = runs)")
        ax.set_title(part)
    fig.suptitle(_title(summary, "time per run"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sweep_plot(summary: dict, path: str) -> str | None:
    swept = {s: r["sweep"] for s, r in summary["services"].items() if r.get("sweep")}
    if not swept:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for service, sweep in swept.items():
        levels = [row["parallel"] for row in sweep["rows"]]
        left.plot(levels, [row["throughput_rps"] for row in sweep["rows"]], marker="o", label=service)
        right.errorbar(levels, [row["latency"]["mean"] for row in sweep["rows"]],
                       yerr=[row["latency"]["ci95"] for row in sweep["rows"]], marker="o", capsize=4, label=service)
    levels = sorted({row["parallel"] for sweep in swept.values() for row in sweep["rows"]})
    left.set(xlabel="requests in parallel", ylabel="throughput (req/s, log)", title="throughput", yscale="log")
    right.set_yscale("log")
    right.set(xlabel="requests in parallel", ylabel="latency (s, mean ± 95% CI, log)", title="latency")
    for ax in (left, right):
        ax.set_xticks(levels)
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle(_title(summary, "parallel sweep"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(summary: dict, folder: str) -> list[str]:
    paths = [times_plot(summary, os.path.join(folder, "times.png")),
             sweep_plot(summary, os.path.join(folder, "parallel.png"))]
    return [p for p in paths if p]
