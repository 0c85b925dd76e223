"""The incentive study's results: Markdown tables, JSON and a PNG (`stem.{md,json,png}`)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result
from audionet.benchmarks.incentive.checks import REPORTED


def _value(check) -> str:
    value = check.value
    if isinstance(value, float) and math.isfinite(value) and value != int(value):
        text = f"{value:.3g}" if abs(value) < 1e4 else f"{value:.2e}"
    elif isinstance(value, float) and not math.isfinite(value):
        text = "inf"
    else:
        text = str(int(value))
    if check.limit == REPORTED:
        return text
    return f"{text} {'✓' if check.ok else '✗'}"


def _per_neural(row: dict) -> str:
    """How many uids of this class earn what one neural uid earns."""
    ratio = row["per_uid_vs_neural"]
    return "never" if ratio <= 0 else f"{1 / ratio:.3g}"


def shares_table(results: list[tuple[str, dict]]) -> str:
    first = results[0][1]["shares"]
    headers = ["Class", "Kind", "uids", "Mean score"]
    for name, _ in results:
        headers += [f"{name}: share", f"{name}: uids per neural uid"]
    rows = []
    for cls, row in sorted(first.items(), key=lambda item: -item[1]["mean"]):
        cells = [cls, row["kind"], str(row["uids"]), f"{row['mean']:.3f}"]
        for _, result in results:
            other = result["shares"][cls]
            cells += [f"{other['share']:.2%}", _per_neural(other)]
        rows.append(cells)
    return table(headers, rows)


def checks_table(results: list[tuple[str, dict]]) -> str:
    names = list(dict.fromkeys(k for _, r in results for k in r["checks"]))
    rows = []
    for name in names:
        limit = next(r["checks"][name].limit for _, r in results if name in r["checks"])
        rows.append([name, limit] + [_value(r["checks"][name]) if name in r["checks"] else "-" for _, r in results])
    return table(["Property", "Must be"] + [label for label, _ in results], rows)


def markdown(found: dict, classes, args, curve) -> str:
    chosen = found["chosen"]
    shown = [(r["candidate"].label, r) for r in found["shown"]]
    swept = found["swept"]
    failures = Counter(k for r in swept for k, c in r["checks"].items() if not c.ok)
    passing = sum(1 for r in swept if all(c.ok for c in r["checks"].values()))
    class_rows = [
        [c.name, c.kind, f"{c.mean:.3f}", ", ".join(f"{s} {v.mean():.3f}" for s, v in c.samples.items())]
        for c in sorted(classes, key=lambda c: -c.mean)
    ]
    parts = [
        "# Incentive study: from scores to weights",
        "",
        f"Score samples: per-round raw scores of the adversary study ({args.samples}); each class draws its "
        "measured scores, per service and per validator. 256 uids: 9 neural (Kokoro; one of them a twin with "
        "the very same scores), 10 neural newcomers at half-way, 100 cheats spread over the attack catalogue, "
        "5 per profile blind spot, the rest of the espeak class. "
        f"{args.rounds} scored rounds; steady window: rounds {args.rounds // 4}-{args.rounds // 2}.",
        "",
        "## Classes (mean score over services, measured)",
        "",
        table(["Class", "Kind", "Mean score", "Per service"], class_rows),
        f"## Sweep: {len(swept)} candidate curves, {passing} keep every property with one validator",
        "",
        "Failures: " + ", ".join(f"{name} {n}" for name, n in failures.most_common()) + ".",
        "",
    ]
    if chosen is None:
        parts += ["**No candidate keeps every property with one validator and under Yuma consensus.**", ""]
        results = shown
    else:
        c = chosen["candidate"]
        parts += [
            f"**Chosen: {c.label}** — the first candidate in order of preference (largest alpha, then earliest "
            "eligibility, then the calmest weights) that keeps every property with one validator, with N "
            "copies, and under Yuma consensus (6 validators, stakes "
            "0.3/0.25/0.15/0.15/0.1/0.05, independent noise, the last one 20 rounds behind).",
            "",
        ]
        if asdict(c.curve) != asdict(curve):
            parts += [f"**`lib/validator/incentive.py` has a different CURVE ({curve}): update it.**", ""]
        results = shown + [("chosen, Yuma incentive", found["consensus"])]
    parts += ["## Properties", "", checks_table(results)]
    labels = [("current", shown[0][1])]
    if chosen:
        labels += [("chosen", chosen), ("chosen, Yuma", found["consensus"]), ("chosen, rank reward", shown[-1][1])]
    parts += ["## Weight share by class (steady window)", "", shares_table(labels)]
    return "\n".join(parts)


def plot(found: dict, path: str) -> str:
    plt = pyplot()
    shown = found["shown"]
    picks = [shown[0]] + ([found["chosen"]] if found["chosen"] else [])
    fig, axes = plt.subplots(1, 1 + len(picks), figsize=(6 + 5 * len(picks), 4.5))
    shares = [r["shares"] for r in picks]
    names = sorted(shares[0], key=lambda n: shares[0][n]["mean"])
    for result, offset in zip(picks, (-0.2, 0.2)):
        values = [result["shares"][n]["share"] for n in names]
        axes[0].barh([i + offset for i in range(len(names))], values, height=0.4, label=result["candidate"].family)
    axes[0].set_yticks(range(len(names)), names, fontsize=7)
    axes[0].set(xlabel="share of all weight (steady window)", title="who is paid")
    axes[0].legend(fontsize=7)
    for ax, result in zip(axes[1:], picks):
        for name, series in result["traces"].items():
            ax.plot(series, label=f"one {name} uid", linewidth=1)
        ax.set(xlabel="scored round", ylabel="weight", title=result["candidate"].label, yscale="log")
        ax.title.set_fontsize(7)
        ax.legend(fontsize=7)
    fig.suptitle("Incentive study: weights by class, current mapping vs chosen curve", fontsize=10)
    return save_figure(fig, path)


def to_json(result: dict, shares: bool = True) -> dict:
    c = result["candidate"]
    return {
        "label": c.label,
        "family": c.family,
        "curve": {"kind": type(c.curve).__name__, **asdict(c.curve)},
        "rank_reward": c.rank_reward,
        "passes": all(check.ok for check in result["checks"].values()),
        "checks": {name: check.as_dict() for name, check in result["checks"].items()},
        "shares": result["shares"] if shares else None,
    }


def write(found: dict, classes, args, slug: str, name: str, command: str, curve) -> str:
    text = markdown(found, classes, args, curve)
    data = {"samples": args.samples, "rounds": args.rounds, "seed": args.seed}
    data.update({key: to_json(found[key]) if found[key] else None for key in ("chosen", "consensus")})
    data.update(shown=[to_json(r) for r in found["shown"]], swept=[to_json(r, shares=False) for r in found["swept"]])
    write_result(args.out, slug, name, data, text, command, lambda path: plot(found, path))
    return text
