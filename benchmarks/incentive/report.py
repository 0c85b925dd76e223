"""The incentive study's results: JSON, and the Markdown tables and PNG rendered from it alone
(`stem.{json,md,png}`), so a table can be regenerated without simulating again."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result
from audionet.benchmarks.incentive.checks import REPORTED
from audionet.benchmarks.incentive.population import HONEST, Samples
from audionet.benchmarks.incentive.scorers import PerService
from audionet.benchmarks.incentive.sim import VALIDATORS
from audionet.lib.validator.incentive import CURVE

SHOWN = (("before (gated, one mechanism)", "before"), ("chosen", "chosen"), ("chosen, one mechanism", "one mechanism"))


def _value(check: dict) -> str:
    value = check["value"]
    if not math.isfinite(value):
        text = "never"
    elif value != int(value):
        text = f"{value:.3g}"
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
    roles = ", ".join(f"{r.name} {r.stake:g}" for r in VALIDATORS)
    samples = [[s, m, f"{mean:.3f}", f"{std:.3f}", f"{of:.3f}"] for s, m, mean, std, of in data["samples_table"]]
    parts = [
        "# Incentive study: from answers to weights on a subnet that looks like one",
        "",
        f"Score samples: per-round raw scores of the adversary study ({data['samples']}); every simulated answer is "
        "one of them, drawn at random. 256 uids: the honest spread (4 uids at each quality 0.70-1.00 of the best), "
        "every cheat of the catalogue, partial cheats (a quarter of their answers cheat), copies of one model, "
        "one-service specialists, flaky miners, the cheap class; at the events 3 of the best turn to the 1 s loop, "
        f"3 drop to 0.85 and 3 newcomers at 1.1 of the best register. Validators (stake): {roles}; each samples 16 "
        "uids a 12 s round, sets weights every 100 blocks; Yuma consensus (subtensor's epoch, bonds and dividends) "
        "every 360 blocks, per mechanism, with commit-reveal.",
        "",
        "## Measured samples",
        "",
        table(["Service", "Miner", "Mean score", "Std", "Of the best"], samples),
        f"## Sweep: {len(swept)} candidate curves, {passing} keep every property",
        "",
        ("Failures: " + ", ".join(f"{name} {n}" for name, n in failures.most_common()) + ".") if failures else "",
        "",
        f"**Chosen: {data['chosen']['label']}** — the first in order of preference (most properties kept, then the "
        "shortest record, the lowest floor, the calmest shape, the least caution about young uids).",
        "",
    ]
    if data["chosen"]["curve"] != asdict(CURVE):
        parts += [f"**`lib/validator/incentive.py` has a different CURVE ({CURVE}): update it.**", ""]
    shown = [(label, data[key]) for label, key in SHOWN]
    parts += ["## Properties", "", checks_table(shown)]
    parts += [
        "## Weight against true quality (pay / the best's, steady window)",
        "",
        curve_table(shown + [(r["label"], r) for r in swept]),
    ]
    return "\n".join(parts)


def plot(data: dict, path: str) -> str:
    plt = pyplot()
    chosen, before = data["chosen"]["weight_vs_quality"], data["before"]["weight_vs_quality"]
    cheap = {service: of for service, miner, _, _, of in data["samples_table"] if miner in data["cheap_engines"]}
    fig, axes = plt.subplots(1, len(chosen), figsize=(5 * len(chosen), 4.5), sharey=True)
    axes = list(axes) if len(chosen) > 1 else [axes]
    for ax, mechanism in zip(axes, chosen):
        for result in data["swept"]:
            points = result["weight_vs_quality"][mechanism]
            ax.plot([q for q, _, _ in points], [w for _, w, _ in points], color="0.8", linewidth=0.8)
        for label, curve, style in (("before: gated", before, "--"), ("chosen", chosen, "-")):
            points = curve.get(mechanism) or curve["all"]
            ax.plot([q for q, _, _ in points], [w for _, w, _ in points], style, linewidth=2, label=label)
        if mechanism in cheap:
            ax.axvline(
                cheap[mechanism],
                color="0.4",
                linestyle=":",
                linewidth=1,
                label=f"espeak class ({cheap[mechanism]:.2f})",
            )
        ax.set(
            title=f"{mechanism}: pay against true quality",
            xlabel="true quality / the best's",
            ylabel="pay / the best's",
        )
        ax.legend(fontsize=8)
    fig.suptitle("Incentive study: every candidate curve (grey), the curve before and the chosen one", fontsize=10)
    return save_figure(fig, path)


def to_json(result: dict) -> dict:
    scorer = result["scorer"]
    return {
        "label": scorer.label,
        "curve": asdict(scorer.curve) if isinstance(scorer, PerService) else asdict(scorer),
        "passes": all(check.ok for check in result["checks"].values()),
        "checks": {name: check.as_dict() for name, check in result["checks"].items()},
        "weight_vs_quality": result["curve"],
    }


def write(found: dict, samples: Samples, args, slug: str, name: str, command: str) -> str:
    data = {"samples": args.samples, "seed": args.seed, "cheap_engines": sorted(samples.cheap_engines)}
    data["samples_table"] = samples_rows(samples)
    data.update({key: to_json(found[key]) for _, key in SHOWN})
    data["swept"] = [to_json(r) for r in found["swept"]]
    text = markdown(data)
    write_result(args.out, slug, name, data, text, command, lambda path: plot(data, path))
    return text
