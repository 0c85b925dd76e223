"""The evaluator-devices study's tables, findings and plot, from its JSON alone."""

from __future__ import annotations

from audionet.benchmarks.common.results import grouped_bars, num, pyplot, save_figure, table, write_result
from audionet.benchmarks.device_tables.tables import sections_text
from audionet.lib.services import registry

NAME = "evaluator-devices"


def titles(summary: dict) -> list[str]:
    return [registry.get(name).title for name in summary["services"]]


def makespan_table(summary: dict) -> str:
    rows = []
    for row in summary["rows"]:
        per_service = [num(row["by_service_s"][name], 2) for name in summary["services"]]
        served = ", ".join(f"{label} {n}" for label, n in row["served"].items())
        rows.append([row["clips"], row["configuration"], num(row["makespan_s"], 2), *per_service, served])
    headers = ["Clips per service", "Configuration", "Time to judge the round (s)"]
    headers += [f"{title} (s)" for title in titles(summary)] + ["Clips per device"]
    return table(headers, rows, summary.get("note"))


def findings_table(summary: dict) -> str:
    rows = []
    for f in summary["findings"]:
        times = [
            num(f["weighted_s"], 2),
            num(f["round_robin_s"], 2),
            f"{num(f['best_alone_s'], 2)} ({f['best_alone']})",
        ]
        ratios = [f"{f['weighted_vs_round_robin']:.2f}x", f"{f['weighted_vs_best_alone']:.2f}x"]
        served = ", ".join(f"{label} {n}" for label, n in f["weighted_served"].items())
        rows.append([f["clips"], *times, *ratios, served, f"{f['largest_score_difference']:.2g}"])
    headers = ["Clips per service", "All, weighted (s)", "All, round-robin (s)", "Best device alone (s)"]
    headers += ["Weighted / round-robin", "Weighted / best alone", "Weighted: clips per device"]
    headers += ["Largest score difference between configurations"]
    return table(headers, rows, summary.get("note"))


def speeds_table(summary: dict) -> str:
    """Each device's measured seconds of evaluation per audio second, per service, at the end of the weighted runs."""
    last = [row for row in summary["rows"] if row["configuration"] == "all, weighted"][-1]
    rows = [
        [label, *(num(speeds.get(name), 4) for name in summary["services"])]
        for label, speeds in last["s_per_audio_s"].items()
    ]
    return table(["Device", *(f"{title}: s per audio s" for title in titles(summary))], rows, summary.get("note"))


def markdown(summary: dict) -> str:
    head = [f"# Evaluators on several devices: {' + '.join(summary['labels'])}", ""]
    if summary.get("note"):
        floor = summary.get("floor_s_per_audio_s")
        head += [summary["note"] + (f"; floor {floor:g} s per audio second per call" if floor else ""), ""]
    audio = "; ".join(
        f"{size} clips: "
        + ", ".join(f"{title} {seconds:.0f} s" for title, seconds in zip(titles(summary), by.values()))
        for size, by in summary["audio_s"].items()
    )
    evaluators = ", ".join(f"{kind} {spec}" for kind, spec in summary["evaluators"].items() if spec != "none")
    head += [
        f"Evaluation profile {summary['profile']} with the study's --eval overrides ({evaluators}); services {', '.join(titles(summary))}; "
        f"{summary['rounds']} timed round(s) per size and configuration; audio per round: {audio}. "
        f"Load average (1 min) at start {summary['load_average'][0]:.1f} on {summary['cpu_cores']} cores.",
        "",
        "",
    ]
    sections = [
        ("Time to judge a round: each device alone, all with round-robin, all with earliest-finish", makespan_table),
        ("What it shows (< 1.00x: the weighted dispatch is faster)", findings_table),
        ("Measured speeds (the weighted dispatch's own estimates)", speeds_table),
    ]
    body = [(title, render(summary)) for title, render in sections] + [("Method", METHOD)]
    return "\n".join(head) + sections_text(body)


METHOD = """\
- One round = every service's pre-made answers (spliced from real speech and music, valid and distinct, as in the
  validator-scale study), judged by the validator's own Judge, services in turn, all answers in at once; the
  time is the Judge's, gates and duplicate checks included (they run on the first device).
- Each configuration holds the same loaded evaluators (one set per device) and starts from nothing measured.
  Round-robin sends clip i to device i mod n; weighted is the validator's dispatch (`--eval.devices`): earliest
  expected finish with each device's measured seconds per audio second, longest clips first
  (`lib/scoring/replicas.py`, the planner of the miner's pool), after an untimed warm-up round of a few clips
  per service measures each device (a validator's earlier rounds do that).
- A clip's score must not depend on the device that judged it: the largest difference of any clip's score
  between configurations is in the findings.
"""


def plot(summary: dict, path: str) -> str:
    plt = pyplot()
    sizes = [str(size) for size in summary["clips"]]
    names = list(dict.fromkeys(row["configuration"] for row in summary["rows"]))
    series = [
        (
            name,
            [
                next(r["makespan_s"] for r in summary["rows"] if r["configuration"] == name and str(r["clips"]) == s)
                for s in sizes
            ],
        )
        for name in names
    ]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    grouped_bars(ax, [f"{size} clips per service" for size in sizes], series)
    ax.set(ylabel="time to judge the round (s)")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    tag = "\nSIMULATED devices" if summary.get("simulated") else ""
    fig.suptitle(f"evaluators on {' + '.join(summary['labels'])}{tag}", fontsize=9)
    return save_figure(fig, path)


def write(summary: dict, out: str, slug: str, name: str, command: str) -> str:
    """<out>/<slug>/<name>.{json,md,png}; the stem."""
    return write_result(out, slug, name, summary, markdown(summary), command, lambda path: plot(summary, path))
