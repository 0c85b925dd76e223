"""The scale study's table, findings and plot, from its JSON alone."""

from __future__ import annotations

from typing import Optional

from audionet.benchmarks.common.results import num, pyplot, save_figure, table

OUTSIDE = ("decode", "gates", "duplicates", "state", "logging")  # the validator's work outside the evaluators
NOT_EVALUATORS = (*OUTSIDE, "network", "evaluation")  # evaluation: the Judge's whole call, evaluators included


def evaluators_of(row: dict) -> dict[str, float]:
    return {stage: s for stage, s in sorted(row["stages"].items()) if stage not in NOT_EVALUATORS}


def outside_s(row: dict) -> float:
    return sum(row["stages"].get(stage, 0.0) for stage in OUTSIDE)


def duplicates_worst(row: dict) -> tuple[Optional[str], float]:
    """The service whose duplicate check took longest in the round, and its seconds."""
    found = [(stages.get("duplicates", 0.0), service) for service, stages in row["by_service"].items()]
    seconds, service = max(found, default=(0.0, None))
    return service, seconds


def findings(rows: list[dict]) -> dict:
    """Growth of the round from 64 to 256 miners (linear: x4), and at the largest N the duplicate check's
    worst service and the work outside the evaluators relative to the evaluators' own."""
    by_n = {row["miners"]: row for row in rows}  # the last measured round of each N
    out: dict = {}
    if 64 in by_n and 256 in by_n:
        out["growth_64_256"] = {key: by_n[256][key] / by_n[64][key] for key in ("round_s", "cpu_s")}
    largest = by_n[max(by_n)]
    evaluators = sum(evaluators_of(largest).values())
    service, seconds = duplicates_worst(largest)
    out["largest"] = {
        "miners": largest["miners"],
        "duplicates_worst_service": service,
        "duplicates_worst_s": seconds,
        "duplicates_alone_worst_cpu_s": max(largest.get("duplicates_alone_cpu_s", {}).values(), default=None),
        "outside_over_evaluators": outside_s(largest) / evaluators if evaluators else None,
    }
    return out


def markdown(data: dict) -> str:
    rows = data["rows"]
    head = [
        f"# Validator scale on {data['device']} ({data['cpu']}, {data['machine']})",
        "",
        f"One validator round (every service: {', '.join(data['services'])}) over N lightweight miners on "
        f"loopback; evaluators: {', '.join(f'{k} {v}' for k, v in data['evaluators'].items() if v != 'none')}. "
        f"Duplicate history filled to its bound ({data['history_size']} clips per service) before each round. "
        + (
            f"Miners answer after a random 0-{data['spread_s']:g} s. "
            if data.get("spread_s")
            else "Miners answer at once. "
        )
        + "Stage seconds are summed over services and answers (stages may overlap in time); outside = decode, "
        "gates, duplicates, state and logging; load average: 1-minute, at the round's start and end.",
        "",
    ]
    columns = ["miners", "answers", "audio s", "round s", "CPU s", "network s", *(f"{s} s" for s in OUTSIDE)]
    columns += ["evaluators s", "outside / evaluators", "peak RSS MB", "load avg"]
    body = []
    for row in rows:
        evaluators = sum(evaluators_of(row).values())
        stages = row["stages"]
        body.append(
            [row["miners"], row["answers"], num(row["audio_s"], 1), num(row["round_s"], 2), num(row["cpu_s"], 2)]
            + [num(stages.get("network"), 2)]
            + [num(stages.get(stage, 0.0), 3) for stage in OUTSIDE]
            + [num(evaluators, 2), f"{outside_s(row) / evaluators:.1%}" if evaluators else "-"]
            + [num(row["peak_rss_mb"], 0), " - ".join(num(x, 1) for x in row["load_average"])]
        )
    sections = [*head, table(columns, body)]
    names = sorted({stage for row in rows for stage in evaluators_of(row)})
    sections += [
        "Evaluators, seconds per round:",
        "",
        table(["miners", *names], [[row["miners"], *(num(row["stages"].get(n), 2) for n in names)] for row in rows]),
    ]
    dupes = sorted({service for row in rows for service in row["by_service"]})
    alone = [row.get("duplicates_alone_cpu_s", {}) for row in rows]  # results before it was measured lack it
    sections += [
        "Duplicate check, seconds per service and round"
        + (" (wall time in the round; CPU time re-run alone on the round's answers after it)" if any(alone) else "")
        + ":",
        "",
        table(
            ["miners", *dupes, *(f"{s} alone (CPU)" for s in dupes if any(alone))],
            [
                [
                    row["miners"],
                    *(num(row["by_service"].get(s, {}).get("duplicates"), 3) for s in dupes),
                    *(num(cpu.get(s), 3) for s in dupes if any(alone)),
                ]
                for row, cpu in zip(rows, alone)
            ],
        ),
    ]
    gated = [row for row in rows if row["gated"]]
    if gated:
        sections.append(
            "Gated answers: " + "; ".join(f"{row['miners']} miners: {row['gated']}" for row in gated) + "\n"
        )
    failed = [row for row in rows if row.get("errors")]
    if failed:
        sections.append(
            "Failed queries: " + "; ".join(f"{row['miners']} miners: {row['errors']}" for row in failed) + "\n"
        )
    found = findings(rows)
    lines = []
    if "growth_64_256" in found:
        growth = found["growth_64_256"]
        lines.append(
            f"- 64 -> 256 miners: round time x{growth['round_s']:.2f}, CPU time x{growth['cpu_s']:.2f} (linear: x4.00)"
        )
    largest = found["largest"]
    ratio = largest["outside_over_evaluators"]
    lines.append(
        f"- {largest['miners']} miners: the duplicate check took at most {largest['duplicates_worst_s']:.3f} s per "
        f"service ({largest['duplicates_worst_service']})"
        + (
            f" ({alone:.3f} s of CPU re-run alone)"
            if (alone := largest.get("duplicates_alone_worst_cpu_s")) is not None
            else ""
        )
        + "; the work outside the evaluators was "
        + (f"{ratio:.1%} of the evaluators' own time" if ratio is not None else "not comparable (no evaluator ran)")
    )
    return "\n".join(sections) + "\n" + "\n".join(lines) + "\n"


def plot(data: dict, path: str) -> None:
    plt = pyplot()
    rows = data["rows"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    miners = [row["miners"] for row in rows]
    left.plot(miners, [row["round_s"] for row in rows], "o-", label="round (wall)")
    left.plot(miners, [row["cpu_s"] for row in rows], "s--", label="round (CPU)")
    base = next((row for row in rows if row["miners"] == 64), rows[0])
    left.plot(miners, [base["round_s"] * n / base["miners"] for n in miners], ":", color="grey", label="linear")
    left.set(xscale="log", yscale="log", xlabel="miners", ylabel="seconds per round", title="Time per round")
    left.legend()
    stages = [*OUTSIDE, *sorted({s for row in rows for s in evaluators_of(row)})]
    bottom = [0.0] * len(rows)
    labels = [str(n) for n in miners]
    for stage in stages:
        values = [row["stages"].get(stage, 0.0) for row in rows]
        right.bar(labels, values, bottom=bottom, label=stage)
        bottom = [b + v for b, v in zip(bottom, values)]
    right.set(xlabel="miners", ylabel="seconds per round (summed over answers)", title="Where the round goes")
    right.legend(fontsize=7, ncol=2)
    save_figure(fig, path)
