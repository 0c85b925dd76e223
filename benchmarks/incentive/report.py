"""The incentive study's results: JSON, and the Markdown tables and PNG rendered from it alone
(`stem.{json,md,png}`), so a table can be regenerated without simulating again."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result
from audionet.benchmarks.incentive.checks import REPORTED
from audionet.benchmarks.incentive.events import EPOCH_H
from audionet.benchmarks.incentive.population import HONEST, Samples
from audionet.benchmarks.incentive.roles import VALIDATORS
from audionet.benchmarks.incentive.scorers import PerService
from audionet.lib.validator.incentive import CURVE

SHOWN = (
    ("before (issue 33's curve)", "before"),
    ("chosen (one mechanism)", "chosen"),
    ("chosen, a mechanism per service", "per service"),
)
TRACKED_LABELS = {
    "bait": "bait and switch 1.00 -> 0.80",
    "upgrade": "upgrade 0.85 -> 1.00, says so",
    "quiet upgrade": "upgrade, same model name",
    "new hotkey": "new hotkey at 1.00",
    "reformed": "cheat turned honest",
    "turned": "turns to the 1 s loop",
}


def _value(check: dict) -> str:
    value = check["value"]
    if not math.isfinite(value):
        text = "never"
    elif value != int(value):
        text = f"{value:.4g}"
    else:
        text = str(int(value))
    return text if check["limit"] == REPORTED else f"{text} {'✓' if check['ok'] else '✗'}"


def checks_table(results: list[tuple[str, dict]]) -> str:
    names = list(dict.fromkeys(k for _, r in results for k in r["checks"]))
    rows = []
    for name in names:
        limit = next(r["checks"][name]["limit"] for _, r in results if name in r["checks"])
        rows.append([name, limit] + [_value(r["checks"][name]) if name in r["checks"] else "-" for _, r in results])
    return table(["Property", "Must be"] + [label for label, _ in results], rows)


def curve_table(results: list[tuple[str, dict]]) -> str:
    """Mean pay / the best's at each true relative quality of the honest spread, per curve and mechanism."""
    qualities = [q for q, _, _ in next(iter(results[0][1]["weight_vs_quality"].values()))]
    rows = [
        [label, mechanism] + [f"{w:.2f}" for _, w, _ in points]
        for label, result in results
        for mechanism, points in result["weight_vs_quality"].items()
    ]
    return table(["Curve", "Mechanism"] + [f"{q:.2f}" for q in qualities], rows)


def samples_rows(samples: Samples) -> list[list]:
    """[service, miner, mean, std, mean / the honest mean] per measured miner, best first."""
    rows = []
    for service, by in samples.scores.items():
        best = by[HONEST].mean()
        for miner, scores in sorted(by.items(), key=lambda item: -item[1].mean()):
            rows.append([service, miner, float(scores.mean()), float(scores.std(ddof=1)), float(scores.mean() / best)])
    return rows


def markdown(data: dict) -> str:
    swept = data["swept"]
    failures = Counter(k for r in swept for k, c in r["checks"].items() if not c["ok"])
    passing = sum(r["passes"] for r in swept)
    roles = ", ".join(f"{r.name} {r.stake:g}" for r in VALIDATORS if r.stake)
    samples = [[s, m, f"{mean:.3f}", f"{std:.3f}", f"{of:.3f}"] for s, m, mean, std, of in data["samples_table"]]
    parts = [
        "# Incentive study: from answers to weights on a subnet that looks like one",
        "",
        f"Score samples: per-round raw scores of the adversary study ({data['samples']}); every simulated answer is "
        "one of them, drawn at random. 256 uids: the honest spread (4 uids at each quality 0.70-1.00 of the best), "
        "every cheat of the catalogue, partial cheats (a quarter of their answers cheat), copies of one model, "
        "one-service specialists, flaky miners down an hour a day (24 failing, 12 saying so), the cheap class; at "
        "the events 3 of the best turn to the 1 s loop, 3 drop to 0.85, 3 bait and switch to 0.80, 8 + 8 upgrade "
        "from 0.85 to 1.00 (saying so in their signed model or not), 3 cheats turn honest, and newcomers register "
        f"(3 at 1.1 of the best, 8 at 1.00). Validators (stake): {roles}; a GPU validator judges 15 uids a 12 s "
        "round, a CPU validator 4, each sets weights every 100 blocks; two hours after the miners' events one "
        "restarts, two lose their state, one adds music and a new one starts. Yuma consensus (subtensor's epoch, "
        "bonds and dividends) every 360 blocks, per mechanism, with commit-reveal and the activity cutoff.",
        "",
        "## Measured samples",
        "",
        table(["Service", "Miner", "Mean score", "Std", "Of the best"], samples),
        f"## Sweep: {len(swept)} candidates on one mechanism, {passing} keep every property",
        "",
        ("Failures: " + ", ".join(f"{name} {n}" for name, n in failures.most_common()) + ".") if failures else "",
        "",
        f"**Chosen: {data['chosen']['label']}** — the first in order of preference (most properties kept, then the "
        "shortest record, the change statistic that decides soonest, the validator that publishes soonest).",
        "",
    ]
    if data["chosen"]["curve"] != asdict(CURVE):
        parts += [f"**`lib/validator/incentive.py` has a different CURVE ({CURVE}): update it.**", ""]
    shown = [(label, data[key]) for label, key in SHOWN]
    parts += ["## Properties", "", checks_table(shown)]
    if data.get("seeds"):
        by_seed = [(f"seed {data['seed']}, {label}", data[key]) for label, key in SHOWN[1:]]
        by_seed += [
            (f"seed {seed}, {label}", results[key])
            for seed, results in data["seeds"].items()
            for label, key in SHOWN[1:]
        ]
        parts += ["## The chosen curve on each seed", "", checks_table(by_seed)]
    rows = [[r["label"], ", ".join(k for k, c in r["checks"].items() if not c["ok"]) or "-"] for r in swept]
    parts += ["## Each candidate of the sweep", "", table(["Candidate", "Properties not kept"], rows)]
    parts += [
        "## Weight against true quality (pay / the best's, steady window)",
        "",
        curve_table(shown + [(r["label"], r) for r in swept]),
    ]
    return "\n".join(parts)


def plot(data: dict, path: str) -> str:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    cheap = [of for _, miner, _, _, of in data["samples_table"] if miner in data["cheap_engines"]]
    for label, key, style in (("before", "before", "--"), ("chosen", "chosen", "-")):
        points = next(iter(data[key]["weight_vs_quality"].values()))
        left.plot([q for q, _, _ in points], [w for _, w, _ in points], style, linewidth=2, label=label)
    if cheap:
        left.axvline(max(cheap), color="0.4", linestyle=":", linewidth=1, label=f"best cheap engine ({max(cheap):.2f})")
    left.set(
        title="pay against true quality (one mechanism)", xlabel="true quality / the best's", ylabel="pay / the best's"
    )
    left.legend(fontsize=8)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for colour, (kind, label) in zip(colours, TRACKED_LABELS.items()):
        for key, style in (("before", "--"), ("chosen", "-")):
            series = data[key]["after"][kind]
            hours = [(n - 2 + 1) * EPOCH_H for n in range(len(series))]
            right.plot(hours, series, style, color=colour, linewidth=1.5, label=label if key == "chosen" else None)
    right.axhline(0.9, color="0.6", linewidth=0.8)
    right.set(
        title="after the events (dashed: before)",
        xlabel="hours after the miners' events",
        ylabel="pay / the best's",
        xlim=(-2 * EPOCH_H, 48),
    )
    right.legend(fontsize=7)
    fig.suptitle("Incentive study: the curve before issue 42 and the chosen one", fontsize=10)
    return save_figure(fig, path)


def to_json(result: dict) -> dict:
    scorer = result["scorer"]
    return {
        "label": scorer.label,
        "curve": asdict(scorer.curve) if isinstance(scorer, PerService) else asdict(scorer),
        "passes": all(check.ok for check in result["checks"].values()),
        "checks": {name: check.as_dict() for name, check in result["checks"].items()},
        "weight_vs_quality": result["curve"],
        "after": result["after"],
    }


def write(found: dict, samples: Samples, args, slug: str, name: str, command: str) -> str:
    data = {"samples": args.samples, "seed": args.seed, "cheap_engines": sorted(samples.cheap_engines)}
    data["samples_table"] = samples_rows(samples)
    data.update({key: to_json(found[key]) for _, key in SHOWN})
    data["swept"] = [to_json(r) for r in found["swept"]]
    data["seeds"] = {
        str(seed): {key: to_json(result) for key, result in results.items()} for seed, results in found["seeds"].items()
    }
    text = markdown(data)
    write_result(args.out, slug, name, data, text, command, lambda path: plot(data, path))
    return text
