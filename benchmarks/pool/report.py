"""The pool study's report: the parallel count per device (as in docs/methodology.md#parallel-requests-per-gpu, with the flags to use),
the dispatch comparison per burst size, what it shows, and one plot (makespan against burst size)."""

from __future__ import annotations

from audionet.benchmarks.common.results import num, pyplot, save_figure, table, write_result
from audionet.benchmarks.device_tables.tables import SWEEP_HEADERS, mean_ci, sections_text, sweep_cells


def parallel_table(summary: dict) -> str:
    rows = [
        [device["label"], summary["titles"][service], *cells[:3], cells[4]]  # the sweep columns but audio and p95
        for device in summary["per_device"]
        for service, sweep in device["sweeps"].items()
        for cells in sweep_cells(sweep)
    ]
    if not rows:
        return "Parallel sweep not run (--parallel '').\n"
    return table(["Device", "Service", *SWEEP_HEADERS, "Latency mean ± 95% CI (s)"], rows, summary.get("note"))


def dispatch_table(summary: dict) -> str:
    rows = []
    for study in summary["studies"].values():
        for row in study["rows"]:
            devices = ", ".join(f"{label} x{p}" for label, p in zip(row["devices"], row["parallel"]))
            policy = row["policy"] if len(row["devices"]) > 1 else "-"
            latency = [num(row["latency_mean_s"]), num(row["latency_p95_s"])]
            served = ", ".join(f"{n}" for n in row["served"].values())
            rows.append([study["title"], devices, policy, row["batch"], mean_ci(row["makespan"], 3), *latency, served])
    headers = ["Service", "Devices (parallel)", "Dispatch", "Burst (requests)", "Time for the burst ± 95% CI (s)"]
    headers += ["Latency mean (s)", "Latency p95 (s)", "Served per device"]
    return table(headers, rows, summary.get("note"))


def findings_table(summary: dict) -> str:
    rows = []
    for study in summary["studies"].values():
        for f in study["findings"]:
            times = [num(f["weighted_s"]), num(f["round_robin_s"]), f"{num(f['best_alone_s'])} ({f['best_alone']})"]
            ratios = [f"{f['weighted_vs_round_robin']:.2f}x", f"{f['weighted_vs_best_alone']:.2f}x"]
            rows.append([study["title"], f["batch"], *times, *ratios, f["others_served"]])
    headers = ["Service", "Burst", "All devices, weighted (s)", "All devices, round-robin (s)", "Best device alone (s)"]
    headers += ["Weighted / round-robin", "Weighted / best alone", "Weighted: requests on the other devices"]
    return table(headers, rows, summary.get("note"))


def render(summary: dict) -> str:
    head = [f"# Device pool: {' + '.join(summary['labels'])}", ""]
    if summary.get("note"):
        head += [summary["note"], ""]
    head += [
        f"{summary['rounds']} round(s) per burst size; load average (1 min) at start {summary['load_average'][0]:.1f} "
        f"on {summary['cpu_cores']} cores.",
        "",
        f"Flags this measurement recommends: `{summary['recommended_flags']}`",
        "",
    ]
    sections = [
        ("Parallel requests per device", parallel_table(summary)),
        ("Dispatch: each device alone, all with round-robin, all speed-weighted", dispatch_table(summary)),
        ("What it shows (< 1.00x: the weighted pool is faster)", findings_table(summary)),
        ("Method", METHOD),
    ]
    return "\n".join(head) + sections_text(sections)


METHOD = """\
- A burst of N requests (drawn as a validator draws them, the same requests for every configuration) is sent at
  once through the miner's own stake line and device pool; the time for the burst is from the first request in to
  the last answer out. Each configuration starts from nothing measured (a timed warm-up per replica as prior).
  Every round counts (no outliers dropped): a round where round-robin puts a request on the slow device is the
  dispatch being measured, not noise.
- Round-robin sends request i to device i mod n (the parallel-requests study's client); weighted is the miner's dispatcher
  (earliest finish with each replica's measured seconds per audio second).
- The parallel count per device is the smallest whose throughput in the per-device sweep is within 5% of that
  device's best (`--pool.parallel` on the command line overrides it).
"""


def plot(summary: dict, path: str) -> str:
    from matplotlib.ticker import NullFormatter

    plt = pyplot()
    studies = list(summary["studies"].values())
    fig, axes = plt.subplots(1, len(studies), figsize=(6 * len(studies), 4.2), squeeze=False)
    for ax, study in zip(axes[0], studies):
        keys = dict.fromkeys((r["configuration"], r["policy"]) for r in study["rows"])
        for configuration, policy in keys:
            rows = [r for r in study["rows"] if (r["configuration"], r["policy"]) == (configuration, policy)]
            name = configuration if configuration.endswith("alone") else f"all, {policy}"
            ax.errorbar(
                [r["batch"] for r in rows],
                [r["makespan"]["mean"] for r in rows],
                yerr=[r["makespan"]["ci95"] for r in rows],
                marker="o",
                capsize=3,
                linestyle="--" if configuration.endswith("alone") else "-",
                label=name,
            )
        ax.set(xscale="log", yscale="log", xlabel="requests sent at once", ylabel="time for the burst (s, log)")
        ax.set_xticks(study["batches"], [str(b) for b in study["batches"]])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{study['title']} ({study['model']})", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    tag = " — SIMULATED devices" if summary.get("simulated") else ""
    fig.suptitle(f"device pool: {' + '.join(summary['labels'])}{tag}", fontsize=10)
    return save_figure(fig, path)


def write(summary: dict, out: str, label: str, command: str) -> str:
    """<out>/<label>/pool.{json,md,png}; the folder."""
    stem = write_result(out, label, "pool", summary, render(summary), command, lambda path: plot(summary, path))
    return stem.rsplit("/", 1)[0]
