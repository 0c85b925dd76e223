"""Evaluation cost on this machine, in two parts (`--parts`):

- profiles: for every evaluation profile, one round of `--clips` honest answers per service (the best offline
  backends, requests drawn as the validator draws them) judged by the validator's own Judge, `--runs` times after
  a warm-up round; each evaluator inside the Judge is a timed stage, divided by the round's clips. With
  `--weights random` (the only choice here for `standard` and `large`: no hub) the profile's models are their
  real architectures at full size with random weights: timing only, and Whisper's random decoder writes to
  its 160-token cap, an upper bound on decoding time. The offline profile keeps its shipped weights: its real
  cost, and how many times real time it runs. The goal on a GPU: <= 0.25 s per clip for `standard`.
- one-by-one: each offline evaluator unbatched (one call per clip) and batched (one call for all clips), on
  espeak speech and procedural music, median of `--runs`; and how well the two shipped speaker encoders
  separate voices.

    audionet-bench evaluators --profiles offline,standard,large --weights random [--clips 4] [--runs 2]
        [--parts profiles,one-by-one] [--undefended] [--eval.devices cpu] [--eval.asr whisper:large-v3 ...: on top
        of every profile]

Writes <out>/<device-slug>/evaluators.{json,md,png}; with `--undefended` (each profile's Judge also timed as it
was before issue 46's defence, side by side: the defence's cost), evaluators-defence.{json,md,png}.
"""

from __future__ import annotations

import os
import time

import numpy as np
from rich.progress import track

from audionet.benchmarks.common.evaluation import Evaluation, one_eval_device
from audionet.benchmarks.common.flags import (
    add_service_flags,
    add_weights_flags,
    one_line_errors,
    study_parser,
    weighted_specs,
)
from audionet.benchmarks.common.results import command_line, grouped_bars, pyplot, save_figure, table, write_result
from audionet.benchmarks.common.targets import GOAL_S_PER_CLIP
from audionet.benchmarks.common.timing import summarise
from audionet.lib.core.config import CommaList, Parser, positive_int
from audionet.lib.core.devices import cpu_model_name, describe_device
from audionet.lib.core.timing import Timer
from audionet.lib.services import registry

PARTS = ("profiles", "one-by-one")
SHIPPED = "offline"  # its weights ship inside packages, so it is always timed with them, whatever --weights says


def honest_round(service, sources, clips: int, seed: int, answers: str = "offline") -> tuple[list, list]:
    """`clips` fresh requests drawn as the validator draws them, answered by the service's offline backend
    (`answers="default"`: its default backend, which runs from the install alone)."""
    backend = service.load_backend(getattr(service, f"{answers}_backend"), warmup=False)
    rng = np.random.default_rng(seed)
    requests = [service.draw(rng, sources) for _ in range(clips)]
    return requests, [service.generate(backend, request) for request in requests]


def time_profile(judges: dict[str, Evaluation], rounds: dict, runs: int, device: str) -> list[dict]:
    """Rows of (column, service, stage, seconds per clip) for each of `judges` (a column name -> a profile's
    Judge); stage "total" is the whole Judge call. Several judges are timed run by run in turn, so that a change
    of load on the machine falls on each alike (the defence's cost is a ratio of two of them)."""
    rows = []
    slug = describe_device(device).slug
    for name, (requests, clips) in rounds.items():
        service = registry.get(name)
        timers = {column: Timer("evaluators", device=slug, window=10_000) for column in judges}
        totals: dict[str, list[float]] = {column: [] for column in judges}
        for run in range(runs):
            for column, evaluation in judges.items():
                timed = evaluation.timed(service, [(requests, clips)], timers[column], warmup=int(run == 0))
                totals[column] += timed.seconds
        for column, timer in timers.items():
            stages = {key.stage.removeprefix("evaluation/"): s.avg_s for key, s in timer.snapshot().items()}
            total = summarise(totals[column])
            stages["total"] = total.mean
            rows += [
                {"profile": column, "service": name, "stage": stage, "s_per_clip": seconds / len(clips)}
                for stage, seconds in stages.items()
            ]
            # the whole round's spread over runs, per clip (seed 003's minimum and maximum)
            rows[-1] |= {
                "min_s_per_clip": total.min / len(clips),
                "max_s_per_clip": total.max / len(clips),
                "median_s_per_clip": total.median / len(clips),
            }
    return rows


def profiles_part(args, device: str) -> dict:
    from audionet.models.eval.profiles import EvalSettings, resolve_specs

    services, profiles = list(args.services), list(args.profiles)
    specs = {profile: resolve_specs(profile, EvalSettings.from_flags(args).overrides) for profile in profiles}
    rounds = {}
    for name in track(services, description="honest answers"):
        service = registry.get(name)
        sources = registry.sources_from_flags(args, [name])[name]
        rounds[name] = honest_round(service, sources, args.clips, args.seed, args.answers)
    rows, columns = [], []
    for profile in track(profiles, description="profiles"):
        weights = "pretrained" if profile == SHIPPED else args.weights
        loaded = weighted_specs(specs[profile], args, device, weights)
        judges = {profile: Evaluation(device=device, specs=loaded)}
        if args.undefended:
            judges[undefended_column(profile)] = Evaluation(device=device, specs=loaded, defended=False)
        columns += judges
        rows += time_profile(judges, rounds, args.runs, device)
    random = args.weights == "random" and profiles != [SHIPPED]
    audio_s = {name: float(np.mean([clip.seconds for clip in clips])) for name, (_, clips) in rounds.items()}
    return {
        "profiles": profiles,
        "columns": columns,
        "services": services,
        "specs": specs,
        "random": random,
        "rows": rows,
        "audio_s": audio_s,
        "answers": {name: getattr(registry.get(name), f"{args.answers}_backend") for name in services},
    }


def undefended_column(profile: str) -> str:
    return f"{profile} undefended"


def defence_cost(part: dict, name: str) -> list[str]:
    """One line per profile timed both ways: its Judge's median time over the undefended one's, for `name` (the
    median: a run that the machine's other work slowed is one run, not a shift of the mean)."""
    columns = part.get("columns", part["profiles"])
    if not any(undefended_column(p) in columns for p in part["profiles"]):
        return []  # no undefended column (and results written before them carry no medians)
    total = {
        r["profile"]: r["median_s_per_clip"] for r in part["rows"] if r["service"] == name and r["stage"] == "total"
    }
    return [
        f"- {p}: the defence costs **{total[p] / total[undefended_column(p)] - 1:+.0%}** (median "
        f"{total[p]:.3f} against {total[undefended_column(p)]:.3f} s per clip; issue 46's target: at most +30 %)"
        for p in part["profiles"]
        if p in total and undefended_column(p) in total
    ]


def profiles_markdown(part: dict, clips: int, runs: int) -> str:
    columns = part.get("columns", part["profiles"])  # results written before the undefended columns have none
    lines = [
        f"## Per profile: seconds per clip, one round of {clips} answers per service batched, {runs} run(s)",
        "",
        "After a warm-up round; seconds per clip = the evaluator's time for the whole round / clips (VC's speaker "
        "stage also embeds the references). "
        + (
            f"Weights: **random** except {SHIPPED}'s, which ship (timing only; a random Whisper decodes to its "
            "160-token cap). "
            if part["random"]
            else ""
        )
        + f"Goal on a GPU: <= {GOAL_S_PER_CLIP} s per clip for the standard profile. Real time: the clips' mean "
        "length over the evaluation time per clip (above 1: faster than the audio plays)."
        + (f" Answers from: {', '.join(part['answers'].values())}." if "answers" in part else "")
        + (
            " An undefended column is the same profile's Judge as it was before issue 46's defence (no robust "
            "judges, no listening noise, no music floor or musicnn band floor, no ceilings or gates), timed in the "
            "same run."
            if columns != part["profiles"]
            else ""
        ),
        "",
    ]
    for name in part["services"]:
        rows = [r for r in part["rows"] if r["service"] == name]
        stages = sorted({r["stage"] for r in rows} - {"total"}) + ["total"]
        cell = {(r["profile"], r["stage"]): r["s_per_clip"] for r in rows}
        cells = [[s, *(f"{cell[p, s]:.3f}" if (p, s) in cell else "-" for p in columns)] for s in stages]
        if "audio_s" in part:
            audio_s = part["audio_s"][name]
            cells.append(
                [
                    f"real time ({audio_s:.1f} s clips)",
                    *(f"{audio_s / cell[p, 'total']:.1f}x" for p in columns),
                ]
            )
        lines += [f"### {registry.get(name).title}", "", table(["evaluator (s/clip)", *columns], cells)]
        cost = defence_cost(part, name)
        lines += [*cost, ""] if cost else []
    return "\n".join(lines)


def plot(result: dict, path: str) -> str:
    parts = [name for name in PARTS if name in result]
    fig, axes = pyplot().subplots(1, len(parts), figsize=(7 * len(parts), 4.5), squeeze=False)
    for ax, name in zip(axes[0], parts):
        if name == "profiles":
            part = result[name]
            total = {(r["profile"], r["service"]): r["s_per_clip"] for r in part["rows"] if r["stage"] == "total"}
            columns = part.get("columns", part["profiles"])
            series = [(p, [total.get((p, s), 0.0) for s in part["services"]]) for p in columns]
            grouped_bars(ax, [registry.get(s).title for s in part["services"]], series)
            ax.axhline(GOAL_S_PER_CLIP, color="grey", linestyle="--", label=f"GPU goal, standard ({GOAL_S_PER_CLIP} s)")
            ax.set(ylabel="evaluation seconds per clip (round batched)", title="per profile")
        else:
            from audionet.benchmarks.evaluators.calls import plot_calls

            plot_calls(ax, result[name])
        ax.legend(fontsize=8)
    fig.suptitle(f"Evaluation cost, {result['device']}" + (" (random weights)" if result.get("random") else ""))
    return save_figure(fig, path)


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import PROFILES, add_eval_flags

    parser = study_parser(prog, __doc__)
    parser.add_argument("--parts", type=CommaList(allowed=PARTS, what="part"), default=",".join(PARTS))
    profiles = CommaList(allowed=tuple(PROFILES), what="profile")
    parser.add_argument("--profiles", type=profiles, default="offline,standard")
    parser.add_argument("--clips", type=positive_int, default=8, help="answers per service in a round")
    parser.add_argument("--runs", type=positive_int, default=2)
    parser.add_argument(
        "--undefended",
        action="store_true",
        help="also time each profile's Judge as it was before issue 46's defence, in the same run (the defence's cost)",
    )
    parser.add_argument(
        "--answers",
        choices=["offline", "default"],
        default="offline",
        help="who answers the round: each service's offline backend (Kokoro, the Kokoro clone, procedural music) "
        "or its default one (espeak, the WORLD clone, procedural music: the install alone, no model packages)",
    )
    add_service_flags(parser)  # references drawn as the validator draws them
    add_weights_flags(parser)
    add_eval_flags(parser, profile=False, device_default="cpu")  # --eval.<kind> overrides every profile
    return parser


def main(argv: list[str], prog: str = "audionet-bench evaluators") -> int:
    args = build_parser(prog).parse_args(argv)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def measure(args, command: str) -> int:
    device = one_eval_device(args, "the evaluators study")
    info = describe_device(device)
    result = {
        "device": info.slug,
        "cpu": cpu_model_name(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": list(os.getloadavg()),
        "clips": args.clips,
        "runs": args.runs,
    }
    if "profiles" in args.parts:
        result["profiles"] = profiles_part(args, device)
        result["random"] = result["profiles"]["random"]
    if "one-by-one" in args.parts:
        from audionet.benchmarks.evaluators.calls import one_by_one

        result["one-by-one"] = one_by_one(args.clips, args.runs, device)
    text = markdown(result)
    stem = "evaluators-defence" if args.undefended else "evaluators"  # a run of its own: the profiles' file stays
    write_result(args.out, info.slug, stem, result, text, command, lambda p: plot(result, p))
    print(text)
    return 0


def markdown(result: dict) -> str:
    """The study's Markdown from its JSON: the profiles' cost and the evaluators one by one, where measured."""
    from audionet.benchmarks.evaluators.calls import calls_markdown

    sections = [f"# Evaluation cost on {result['device']} ({result['cpu']})", ""]
    if "profiles" in result:
        sections.append(profiles_markdown(result["profiles"], result["clips"], result["runs"]))
    if "one-by-one" in result:
        sections.append(calls_markdown(result["one-by-one"], result["clips"], result["runs"]))
    return "\n".join(sections)
