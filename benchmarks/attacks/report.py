"""The attack study's findings, table and plot: per service and judge, the attacked reward at each bound
(per answer the best of its attacks within that bound, then the mean over answers), its gain over the clean reward, the SNR it
took, and the honest backends' rewards beside it; the targets of issue 46 at the headline bound."""

from __future__ import annotations

from statistics import fmean

from audionet.benchmarks.common.results import num, pyplot, save_figure, table
from audionet.lib.services import TTS

GAIN_TARGET, RATIO_TARGET, HONEST_KEPT, MARGIN_SHRINK = 0.05, 0.6, 0.95, 0.1
RATIO_SERVICES = (TTS.name,)  # where issue 46 also bounds the attacked reward by a share of the honest one


# The run's flags a result records (its "settings"), which the report reads back.
SETTINGS = (
    "clips",
    "tracks",
    "bounds",
    "headline",
    "steps",
    "sweep_steps",
    "eot",
    "eot_services",
    "headline_pgd",
    "attack",
    "search",
    "check_every",
    "own_draws",
    "validator_draws",
    "seed",
)


def best_runs(row: dict, judge: str) -> dict[float, dict]:
    """bound -> the run the attacker rates highest (by its own view, `seen`, where the Judge hears noise of its own
    seeds) among the attacks at that bound or a smaller one (an attacker allowed a bound may send what it found
    within a smaller one)."""
    runs = row["runs"][judge]
    return {
        bound: max((run for run in runs if run["bound"] <= bound), key=lambda run: run.get("seen", run["score"]))
        for bound in sorted({run["bound"] for run in runs})
    }


def deployed(result: dict) -> str:
    """The Judge as deployed: "defended", or "undefended" for a service the defence does not change."""
    return result["judges"][-1]


def summarise(result: dict, headline: float) -> dict:
    judges = result["judges"]
    honest_by_material: dict[str, dict[str, list[float]]] = {}
    for row in result["honest"]:
        for judge in judges:
            honest_by_material.setdefault(row["material"], {}).setdefault(judge, []).append(row[judge])
    honest = {m: {j: fmean(v) for j, v in by.items()} for m, by in honest_by_material.items()}
    attacked: dict[str, dict] = {}
    for judge in judges:
        bounds = sorted({run["bound"] for row in result["attacked"] for run in row["runs"][judge]})
        per_bound = {}
        for bound in bounds:
            runs = [best_runs(row, judge)[bound] for row in result["attacked"]]
            per_bound[str(bound)] = {
                "score": fmean(r["score"] for r in runs),
                "gain": fmean(r["gain"] for r in runs),
                "max_gain": max(r["gain"] for r in runs),
                "snr_db": _mean_snr(runs),
                "bound_snr_db": _mean_snr(
                    [run for row in result["attacked"] for run in row["runs"][judge] if run["bound"] == bound]
                ),
            }
        clean = fmean(row[judge] for row in result["attacked"])
        attacked[judge] = {"clean": clean, "bounds": per_bound}
    findings = {"honest": honest, "attacked": attacked, "headline": headline, "deployed": deployed(result)}
    findings["targets"] = targets(findings, ratio=result.get("service") in RATIO_SERVICES)
    return findings


def _mean_snr(runs: list[dict]):
    """The mean SNR of answers that changed (an unchanged answer's is infinite), None if none did."""
    finite = [r["snr_db"] for r in runs if r["snr_db"] != float("inf")]
    return fmean(finite) if finite else None


def targets(findings: dict, ratio: bool) -> dict:
    """At the headline bound, with the Judge as deployed: the mean gain <= 0.05 and (`ratio`: TTS) the attacked
    reward <= 0.6 x the honest one; the honest materials keep >= 95% of their undefended reward, or their margin
    over the attacked material's clean reward shrinks by at most 10%."""
    judge = findings["deployed"]
    at = findings["attacked"][judge]["bounds"].get(str(findings["headline"]))
    honest = next(iter(findings["honest"].values()), None)
    out = {}
    if at is not None:
        out["gain"] = {"value": at["gain"], "met": at["gain"] <= GAIN_TARGET}
        if ratio and honest:
            value = at["score"] / honest[judge] if honest[judge] else None
            out["attacked / honest"] = {"value": value, "met": value is not None and value <= RATIO_TARGET}
    for material, scores in findings["honest"].items():
        kept = scores[judge] / scores["undefended"] if scores["undefended"] else 1.0
        before = scores["undefended"] - findings["attacked"]["undefended"]["clean"]
        after = scores[judge] - findings["attacked"][judge]["clean"]
        margin = after / before if before > 0 else 1.0
        out[f"{material} kept"] = {"value": kept, "met": kept >= HONEST_KEPT or margin >= 1 - MARGIN_SHRINK}
        out[f"{material} margin kept"] = {"value": margin, "met": margin >= 1 - MARGIN_SHRINK}
    return out


def headline_attacks(s: dict, search: str = "") -> str:
    """What ran at the headline bound, for the report's opening paragraph (`search`: the random search's words)."""
    eot = f"EOT-PGD over {s['eot']} random views per step for {', '.join(s['eot_services'])}"
    if not s.get("headline_pgd", True):
        return f"EOT-PGD with {s['steps']} steps at the headline bound {s['headline']:g} ({eot}; no plain PGD there{search})"
    return f"PGD with {s['steps']} steps at the headline bound {s['headline']:g} (plus {eot}{search})"


def markdown(data: dict) -> str:
    models = ", ".join(f"{k} {v}" for k, v in data["evaluators"].items() if v != "none")
    s = data["settings"]
    draws = s.get("search", 0)
    search = f"; and a random search, no gradient: the best of {draws} sign-noise draws at the bound" if draws else ""
    others = f", {s['sweep_steps']} at the others" if len(s["bounds"]) > 1 else ""
    lines = [
        f"# White-box attacks on the Judge ({data['profile']} profile)",
        "",
        f"Evaluators: {models}. Judges attacked: {', '.join(s.get('attack', ('undefended', 'defended')))}. "
        f"{s['clips']} attacked answers per service; {headline_attacks(s, search)}{others}; "
        "the real Judge checks the answer every "
        f"{s['check_every']} steps. Reward: per answer the best of its attacks within the bound, mean over answers. "
        "Undefended: the Judge before the defence (no naturalness student, no ceilings, no gate). SNR: of the answers "
        "the attacks at that bound kept (their best, often before the bound was used up), and of the answer counted (it may come from a smaller bound).",
        "",
    ]
    if s.get("validator_draws"):
        lines += [
            "The deployed Judge's ASR hears each answer through Gaussian noise seeded per verdict "
            "(lib/scoring/listening.py): the attacker checks every candidate by the mean over "
            f"{s['own_draws']} draws of its own seeds and keeps the one it rates highest (the best attack per answer too, "
            "as it rates them); the reward counted is that "
            f"answer's mean over {s['validator_draws']} validator seeds it never saw (the clean reward's too). "
            "Spread: the std of one verdict over those seeds, mean over answers.",
            "",
        ]
    for result in data["services"].values():
        f = result["findings"]
        lines += [f"## {result['title']}", ""]
        honest = ", ".join(
            f"{m} " + ", ".join(f"{num(v[j])} {j}" for j in result["judges"]) for m, v in f["honest"].items()
        )
        honest += spreads(result)
        same = " The defence changes nothing this service reads: one Judge." if len(result["judges"]) == 1 else ""
        lines += [f"Honest: {honest}.{same}", ""]
        held = sorted(
            {m for row in result["attacked"] for runs in row["runs"].values() for r in runs for m in r.get("held", ())}
        )
        if held:
            lines += [
                f"Held at the clean answer's values (no gradient here: not attacked, only checked by the real Judge): "
                f"{', '.join(held)}.",
                "",
            ]
        rows = []
        for judge in result["judges"]:
            a = f["attacked"][judge]
            for bound, at in a["bounds"].items():
                rows.append(
                    [
                        judge,
                        bound,
                        f"{num(at.get('bound_snr_db'), 1)} dB",
                        f"{num(at['snr_db'], 1)} dB",
                        num(a["clean"]),
                        num(at["score"]),
                        f"{at['gain']:+.3f}",
                        f"{at['max_gain']:+.3f}",
                    ]
                )
        headers = [
            "judge",
            "L-inf bound",
            "SNR (answers found at the bound)",
            "SNR (the answer counted)",
            "clean reward",
            "attacked reward",
            "gain (mean)",
            "gain (max)",
        ]
        lines.append(table(headers, rows))
        for name, target in f["targets"].items():
            lines.append(f"- {name}: **{num(target['value'])}** ({'met' if target['met'] else 'NOT met'})")
        lines.append("")
    return "\n".join(lines) + "\n"


def spreads(result: dict) -> str:
    """ "; spread over validator seeds: kokoro 0.027, espeak 0.029 (deployed)" where verdicts were judged under
    several seeds (rows without a spread: a study from before the listening noise)."""
    judge, by_material = deployed(result), {}
    for row in result["honest"] + result["attacked"]:
        if "spread" in row:
            by_material.setdefault(row["material"], []).append(row["spread"][judge])
    if not by_material:
        return ""
    listed = ", ".join(f"{m} {num(fmean(v))}" for m, v in by_material.items())
    return f"; spread over validator seeds ({judge}): {listed}"


def plot(data: dict, path: str) -> str:
    services = list(data["services"].values())
    fig, axes = pyplot().subplots(1, len(services), figsize=(5 * len(services), 4.2), squeeze=False)
    for ax, result in zip(axes[0], services):
        f = result["findings"]
        for judge, style in zip(result["judges"], ("--", "-")):
            bounds = f["attacked"][judge]["bounds"]
            if not bounds:
                continue  # judged clean, not attacked (--attack)
            xs = [float(b) for b in bounds]
            ax.plot(xs, [bounds[b]["score"] for b in bounds], style, marker="o", color="C3", label=f"attacked, {judge}")
            ax.axhline(f["attacked"][judge]["clean"], color="C3", linestyle=style, linewidth=0.6)
        for n, (material, scores) in enumerate(f["honest"].items()):
            ax.axhline(scores[f["deployed"]], color=f"C{2 + n}", label=f"{material} (honest), {f['deployed']}")
        ax.set(xscale="log", ylim=(0, 1.02), xlabel="L-inf bound", ylabel="reward", title=result["title"])
        ax.legend(fontsize=7)
    fig.suptitle(f"White-box attacks on the Judge ({data['profile']} profile)", fontsize=10)
    return save_figure(fig, path)
