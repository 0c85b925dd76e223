"""Cheap and gaming miners against the validator's Judge, next to the best honest backend.

Each round draws one fresh request as the validator draws it; the honest backend and every
attack answer it, and the round is judged together (gates, duplicates, evaluators). Answering
the same request makes the comparison paired: an attack's score differs from the honest one by
what the attack does, not by which prompt or reference it happened to get.
The table gives each attack's mean score next to the honest backend's; the per-round scores are
the samples the incentive study (benchmarks/incentive/main.py) draws from.

    audionet-bench adversaries [--rounds 32] [--services tts,vc,music] [--eval.profile offline]
"""

from __future__ import annotations

from collections import Counter
from statistics import fmean, stdev

import numpy as np

from audionet.benchmarks.adversaries.attacks import Kit, for_service
from audionet.benchmarks.common.flags import add_service_flags, one_line_errors, study_parser
from audionet.benchmarks.common.owning import SCORES, owned_scores
from audionet.benchmarks.common.results import command_line, pyplot, save_figure, table, write_result
from audionet.lib.core.config import Parser, positive_int
from audionet.lib.services import registry

HONEST = "honest"


def make_kit(seed: int) -> Kit:
    from audionet.models.base import MusicGenerator, SpeechSynthesizer, VoiceCloner
    from audionet.models.factory import load_backend

    return Kit(
        rng=np.random.default_rng(seed),
        speech=load_backend("kokoro:", SpeechSynthesizer, warmup=False),
        espeak=load_backend("baseline:espeak", SpeechSynthesizer, warmup=False),
        synth=load_backend("baseline:synth", MusicGenerator, warmup=False),
        world=load_backend("baseline:world", VoiceCloner, warmup=False),
    )


def play_round(service, honest, judge, kit, rng, sources, previous) -> tuple[list[dict], object]:
    """One round: the honest miner and every attack answer one fresh request; `previous` is the honest
    miner's answer from the round before (what a copier has; None: the round before the measured ones, the
    honest miner alone, whose answer enters the Judge's history as any earlier round's would). Returns the
    results and this round's honest answer.

    Each attack is judged on its own against the history of the honest miner's earlier answers,
    before the honest answer joins that history: on a network every miner has its own prompt,
    so two answers to one request (an attack that happens to equal the honest answer, two
    replays of one reference) must not be taken for copies of each other here."""

    attacks = for_service(service.name) if previous is not None else []
    request = service.draw(rng, sources)
    own = service.generate(honest, request)
    verdicts = [
        judge.score(
            service.judging,
            [service.job(request, attack.make(kit, request, own, previous), attack.name)],
            remember=False,
        )[0]
        for attack in attacks
    ]
    verdicts.insert(0, judge.score(service.judging, [service.job(request, own, HONEST)])[0])
    names = [HONEST] + [attack.name for attack in attacks]
    results = [
        {"miner": n, "score": v.score, "gate": v.gate, "components": v.components}
        | owned_scores(service.judging, v.measures, bool(v.gate))
        for n, v in zip(names, verdicts)
    ]
    return results, own


def stratified(sources, number: int):
    """Synthesised references cycle through their engines round by round: the validator's draw
    (engine first, then voice) has the same expectation, but with a few rounds chance could hand
    one engine most of them, and each engine favours the cloner built on it."""
    from audionet.lib.prompts.references import SynthesisedReferences

    engines = getattr(sources, "engines", None)
    if not engines or len(engines) < 2:
        return sources
    return SynthesisedReferences([engines[number % len(engines)]])


def summarise(results: list[dict]) -> dict[str, dict]:
    by_miner: dict[str, list[dict]] = {}
    for result in results:
        by_miner.setdefault(result["miner"], []).append(result)
    summary = {}
    for miner, rows in by_miner.items():
        scores, gates = [r["score"] for r in rows], Counter((r["gate"] or "").split(":")[0] for r in rows if r["gate"])
        summary[miner] = {
            "score": fmean(scores),
            "score_std": stdev(scores) if len(scores) > 1 else 0.0,
            "gated": sum(1 for r in rows if r["gate"]),
            "rounds": len(rows),
            "gates": dict(gates.most_common()),
            "owned": {key: fmean(r[key] for r in rows) for key in SCORES},
        }
    return summary


def run(args, profile: str, judge, sources: dict, progress) -> dict:
    """--rounds rounds of every service in --services."""
    kit, rounds, seed = make_kit(args.seed), args.rounds, args.seed
    out = {
        "profile": profile,
        "rounds": rounds,
        "seed": seed,
        "evaluators": judge.evaluators.describe(),
        "services": {},
    }
    for index, name in enumerate(args.services):
        service = registry.get(name)
        honest = service.load_backend(service.offline_backend)
        judge.duplicates.forget()  # each service's run starts with no history, like a new validator
        first = np.random.default_rng([seed, index, rounds])
        previous = play_round(service, honest, judge, kit, first, sources.get(name), None)[1]
        results = []
        for number in range(rounds):
            rng, references = np.random.default_rng([seed, index, number]), stratified(sources.get(name), number)
            played, previous = play_round(service, honest, judge, kit, rng, references, previous)
            results += played
            progress()
        attacks = {a.name: a for a in for_service(name)}
        out["services"][name] = {
            "title": service.title,
            "honest_backend": honest.model_id,
            "summary": summarise(results),
            "blind_spots": {n: list(a.blind_spot) for n, a in attacks.items() if a.blind_spot},
            "what": {n: a.what for n, a in attacks.items()},
            "results": results,
        }
    return out


def beats_honest(report: dict, service: str, margin: float = 0.0) -> list[str]:
    """Attacks whose mean raw score beats the honest backend's (by more than `margin`)."""
    summary = report["services"][service]["summary"]
    honest = summary[HONEST]["score"]
    return [name for name, row in summary.items() if name != HONEST and row["score"] > honest + margin]


def markdown(report: dict) -> str:
    models = ", ".join(f"{k} {v}" for k, v in report["evaluators"].items() if v != "none")
    parts = [
        f"# Adversarial miners vs the validator ({report['profile']} profile)",
        "",
        f"{report['rounds']} rounds per service, seed {report['seed']}; evaluators: {models}.",
        "",
        "Score: the Judge's 0..1 score of each answer, the reward the validator's EMA sees (mean and standard "
        "deviation over rounds: the round-to-round noise the incentive study draws from). Each round every miner "
        "answers the same fresh request (a paired comparison).",
        "",
    ]
    headers = ["Miner", "What it sends", "Score (mean)", "Score (std)", "Gated", "Gates fired", "vs honest"]
    for result in report["services"].values():
        summary, honest = result["summary"], result["summary"][HONEST]
        rows = []
        for name, row in sorted(summary.items(), key=lambda item: -item[1]["score"]):
            label = f"**{HONEST} ({result['honest_backend']})**" if name == HONEST else name
            verdict = "-" if name == HONEST else ("**beats honest**" if row["score"] > honest["score"] else "loses")
            if name in result["blind_spots"] and report["profile"] in result["blind_spots"][name]:
                verdict += " (known blind spot)"
            gates = ", ".join(f"{g} {n}" for g, n in row["gates"].items()) or "-"
            what = result["what"].get(name, "the best offline backend")
            scores = [f"{row['score']:.3f}", f"{row['score_std']:.3f}", f"{row['gated']} of {row['rounds']}"]
            rows.append([label, what, *scores, gates, verdict])
        parts += [f"## {result['title']}", "", table(headers, rows), *owning_table(result["summary"])]
    return "\n".join(parts)


def owning_table(summary: dict) -> list[str]:
    """Each miner that a gate does not always stop, with the judges nothing floors (benchmarks/common/owning.py)
    at half their range, owned, and owned without the ceilings: what owning them is worth for any weights."""
    owned = {name: row["owned"] for name, row in summary.items() if row.get("owned", {}).get("owned_uncapped")}
    if not owned:
        return []
    rows = [
        [name, *(f"{found[key]:.3f}" for key in SCORES), f"{found['owned'] - found['learned_middle']:+.3f}"]
        for name, found in sorted(owned.items(), key=lambda item: -item[1]["owned"])
    ]
    headers = ["Miner", "judges at half", "owned", "owned, no ceilings", "gain from owning them"]
    return ["", "Owning the judges nothing floors (ceilinged parts at their top):", "", table(headers, rows)]


def plot(report: dict, path: str) -> str:
    services = list(report["services"].values())
    fig, axes = pyplot().subplots(1, len(services), figsize=(5 * len(services), 4.5), squeeze=False)
    for ax, result in zip(axes[0], services):
        summary = result["summary"]
        names = sorted(summary, key=lambda n: summary[n]["score"])
        colours = ["C2" if n == HONEST else "C3" for n in names]
        ax.barh(names, [summary[n]["score"] for n in names], color=colours)
        ax.axvline(summary[HONEST]["score"], color="C2", linestyle="--", linewidth=1)
        ax.set(title=result["title"], xlabel="raw score (mean)", xlim=(0, 1))
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(f"Adversarial miners vs the honest backend ({report['profile']} profile)", fontsize=10)
    return save_figure(fig, path)


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import add_eval_flags

    parser = study_parser(prog, __doc__)
    parser.add_argument("--rounds", type=positive_int, default=32, help="validator rounds per service")
    add_service_flags(parser)
    add_eval_flags(parser)
    return parser


def main(argv: list[str], prog: str = "audionet-bench adversaries") -> int:
    args = build_parser(prog).parse_args(argv)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def measure(args, command: str) -> int:
    from rich.progress import Progress

    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.core.devices import device_slug

    judge, profile = judge_from_flags(args)
    sources = registry.sources_from_flags(args, args.services)
    with Progress() as progress:
        task = progress.add_task("adversary rounds", total=args.rounds * len(args.services))
        report = run(args, profile, judge, sources, lambda: progress.advance(task))
    slug, name = device_slug(judge.evaluators.device), f"adversaries-{report['profile']}"
    write_result(args.out, slug, name, report, markdown(report), command, lambda p: plot(report, p))
    print(markdown(report))
    return 0
