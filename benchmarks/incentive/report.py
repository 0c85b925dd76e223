"""The incentive study's results: Markdown tables, JSON and a PNG (`stem.{md,json,png}`)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result
from audionet.benchmarks.incentive.checks import REPORTED
from audionet.benchmarks.incentive.population import HONEST, Samples
from audionet.benchmarks.incentive.scorers import PerService
from audionet.benchmarks.incentive.sim import VALIDATORS


def _value(check) -> str:
    value = check.value
    if isinstance(value, float) and not math.isfinite(value):
        text = "never"
    elif isinstance(value, float) and value != int(value):
        text = f"{value:.3g}"
    else:
        text = str(int(value))
    return text if check.limit == REPORTED else f"{text} {'✓' if check.ok else '✗'}"


def checks_table(results: list[tuple[str, dict]]) -> str:
    names = list(dict.fromkeys(k for _, r in results for k in r["checks"]))
    rows = []
    for name in names:
        limit = next(r["checks"][name].limit for _, r in results if name in r["checks"])
        rows.append([name, limit] + [_value(r["checks"][name]) if name in r["checks"] else "-" for _, r in results])
    return table(["Property", "Must be"] + [label for label, _ in results], rows)


def curve_table(results: list[tuple[str, dict]]) -> str:
    """Mean pay / the best's at each true relative quality of the honest spread, per candidate and mechanism."""
    qualities = [q for q, _, _ in next(iter(results[0][1]["curve"].values()))]
    rows = []
    for label, result in results:
        for mechanism, points in result["curve"].items():
            rows.append([label, mechanism] + [f"{w:.2f}" for _, w, _ in points])
    return table(["Curve", "Mechanism"] + [f"{q:.2f}" for q in qualities], rows)


def _samples_table(samples: Samples) -> str:
    rows = []
    for service, by in samples.scores.items():
        best = by[HONEST].mean()
        for miner, scores in sorted(by.items(), key=lambda item: -item[1].mean()):
            rows.append(
                [service, miner, f"{scores.mean():.3f}", f"{scores.std(ddof=1):.3f}", f"{scores.mean() / best:.3f}"]
            )
    return table(["Service", "Miner", "Mean score", "Std", "Of the best"], rows)


def markdown(found: dict, samples: Samples, args, curve) -> str:
    chosen = found["chosen"]
    swept = found["swept"]
    failures = Counter(k for r in swept for k, c in r["checks"].items() if not c.ok)
    passing = sum(all(c.ok for c in r["checks"].values()) for r in swept)
    roles = ", ".join(f"{r.name} {r.stake:g}" for r in VALIDATORS)
    picked = chosen["scorer"]
    parts = [
        "# Incentive study: from answers to weights on a subnet that looks like one",
        "",
        f"Score samples: per-round raw scores of the adversary study ({args.samples}, profile `{samples.profile}`); "
        "every simulated answer is one of them, drawn at random. 256 uids: the honest spread (4 uids at each "
        "quality 0.70-1.00 of the best), every cheat of the catalogue, partial cheats (a quarter of their answers "
        "cheat), copies of one model, one-service specialists, flaky miners, the cheap class; at the events 3 of "
        "the best turn to the 1 s loop, 3 drop to 0.85 and 3 newcomers at 1.1 of the best register. Validators "
        f"(stake): {roles}; each samples 16 uids a 12 s round, sets weights every 100 blocks; Yuma consensus "
        "(subtensor's epoch, bonds and dividends) every 360 blocks, per mechanism, with commit-reveal.",
        "",
        "## Measured samples",
        "",
        _samples_table(samples),
        f"## Sweep: {len(swept)} candidate curves, {passing} keep every property",
        "",
        ("Failures: " + ", ".join(f"{name} {n}" for name, n in failures.most_common()) + ".") if failures else "",
        "",
        f"**Chosen: {picked.label}** — the first in order of preference (most properties kept, then the shortest "
        "record, the lowest floor, the calmest shape, the least caution about young uids).",
        "",
    ]
    if isinstance(picked, PerService) and asdict(picked.curve) != asdict(curve):
        parts += [f"**`lib/validator/incentive.py` has a different CURVE ({curve}): update it.**", ""]
    shown = [
        ("before (gated, one mechanism)", found["before"]),
        ("chosen", chosen),
        ("chosen, one mechanism", found["one mechanism"]),
    ]
    parts += ["## Properties", "", checks_table(shown)]
    parts += [
        "## Weight against true quality (pay / the best's, steady window)",
        "",
        curve_table(shown + [(r["scorer"].label, r) for r in swept]),
    ]
    return "\n".join(parts)


def plot(found: dict, samples: Samples, path: str) -> str:
    plt = pyplot()
    chosen, before = found["chosen"], found["before"]
    mechanisms = list(chosen["curve"])
    fig, axes = plt.subplots(1, len(mechanisms), figsize=(5 * len(mechanisms), 4.5), sharey=True)
    axes = list(axes) if len(mechanisms) > 1 else [axes]
    for ax, mechanism in zip(axes, mechanisms):
        for result in found["swept"]:
            points = result["curve"][mechanism]
            ax.plot([q for q, _, _ in points], [w for _, w, _ in points], color="0.8", linewidth=0.8)
        for label, result, style in (("before: gated", before, "--"), ("chosen", chosen, "-")):
            points = result["curve"].get(mechanism) or result["curve"]["all"]
            ax.plot([q for q, _, _ in points], [w for _, w, _ in points], style, linewidth=2, label=label)
        cheap = cheap_quality(samples, mechanism)
        if cheap is not None:
            ax.axvline(cheap, color="0.4", linestyle=":", linewidth=1, label=f"espeak class ({cheap:.2f})")
        ax.set(
            title=f"{mechanism}: pay against true quality",
            xlabel="true quality / the best's",
            ylabel="pay / the best's",
        )
        ax.legend(fontsize=8)
    fig.suptitle("Incentive study: every candidate curve (grey), the curve before and the chosen one", fontsize=10)
    return save_figure(fig, path)


def cheap_quality(samples: Samples, service: str) -> float | None:
    """The cheap engine's relative quality in `service`, where the catalogue has one."""
    engine = next((m for m in samples.scores.get(service, {}) if m in samples.cheap_engines), None)
    return None if engine is None else float(samples.scores[service][engine].mean() / samples.honest(service).mean())


def to_json(result: dict) -> dict:
    scorer = result["scorer"]
    return {
        "label": scorer.label,
        "curve": asdict(scorer.curve) if isinstance(scorer, PerService) else asdict(scorer),
        "passes": all(check.ok for check in result["checks"].values()),
        "checks": {name: check.as_dict() for name, check in result["checks"].items()},
        "weight_vs_quality": result["curve"],
    }


def write(found: dict, samples: Samples, args, slug: str, name: str, command: str, curve) -> str:
    text = markdown(found, samples, args, curve)
    data = {"samples": args.samples, "seed": args.seed}
    data.update({key: to_json(found[key]) for key in ("chosen", "before", "one mechanism")})
    data["swept"] = [to_json(r) for r in found["swept"]]
    write_result(args.out, slug, name, data, text, command, lambda path: plot(found, samples, path))
    return text
