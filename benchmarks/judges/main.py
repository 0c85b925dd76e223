"""How well the evaluation profile tells quality apart, on real audio: speech by class, music by class, and
prompt adherence.

    audionet-bench judges [--sentences 10] [--tracks 28] [--eval.profile offline]

Speech (benchmarks/judges/speech.py): the TTS score of Kokoro, espeak, band-limited and noisy speech of the
same sentences. Music (benchmarks/judges/music.py): the labelled neural tracks against the procedural synth
and every music attack of the adversary catalogue, and each track with its own prompt against a
contradicting one. Writes <out>/<device-slug>/judges-<profile>.{json,md,png}.
"""

from __future__ import annotations

from audionet.benchmarks.common.flags import one_line_errors, study_parser
from audionet.benchmarks.common.owning import SCORES
from audionet.benchmarks.common.results import command_line, pyplot, save_figure, table, write_result
from audionet.benchmarks.judges import music, speech
from audionet.lib.core.config import Parser, positive_int


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import add_eval_flags

    parser = study_parser(prog, __doc__)
    parser.add_argument("--sentences", type=positive_int, default=10, help="sentences per speech class")
    parser.add_argument("--tracks", type=positive_int, default=28, help="labelled neural tracks (28 ship)")
    parser.add_argument("--seed", type=int, default=0)
    add_eval_flags(parser)
    return parser


def main(argv: list[str], prog: str = "audionet-bench judges") -> int:
    args = build_parser(prog).parse_args(argv)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def measure(args, command: str) -> int:
    from rich.progress import Progress

    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.core.devices import device_slug

    judge, profile = judge_from_flags(args)
    with Progress() as progress:
        task = progress.add_task("sentences, then tracks", total=args.sentences + args.tracks)
        tick = lambda: progress.advance(task)  # noqa: E731
        spoken = speech.run(judge, args.sentences, args.seed, tick)
        rows, pairs = music.run(judge, args.tracks, args.seed, tick)
    data = {
        "profile": profile,
        "evaluators": judge.evaluators.describe(),
        "speech_classes": {"rows": spoken, "findings": speech.findings(spoken)},
        "music_classes": {"rows": rows, "pairs": pairs, "findings": music.findings(rows, pairs)},
    }
    slug = device_slug(judge.evaluators.device)
    write_result(args.out, slug, f"judges-{data['profile']}", data, markdown(data), command, lambda p: plot(data, p))
    print(markdown(data))
    return 0


def markdown(data: dict) -> str:
    spoken, played = data["speech_classes"]["findings"], data["music_classes"]["findings"]
    models = ", ".join(f"{k} {v}" for k, v in data["evaluators"].items() if v != "none")
    lines = [
        f"# What the {data['profile']} profile tells apart",
        "",
        f"Evaluators: {models}.",
        "",
        "## Speech (TTS)",
        "",
    ]
    lines.append(table(["class", "score (mean)"], [[n, f"{m:.3f}"] for n, m in spoken["mean_score"].items()]))
    lines += [
        f"- espeak / Kokoro: **{spoken['espeak_over_kokoro']:.2f}** (target at most 0.60)",
        f"- band-limited to 8 kHz below full band: **{spoken['band_limited_below_full']} of {spoken['sentences']}**"
        " sentences (target at least 9 of 10)",
        "",
        "## Music",
        "",
    ]
    by_score = sorted(played["mean_score"].items(), key=lambda item: -item[1])
    lines.append(table(["class", "score (mean)"], [[n, f"{m:.3f}"] for n, m in by_score]))
    cheats = ", ".join(played["cheats_at_or_above_honest"]) or "none"
    lines += [
        f"- neural tracks minus the synth: **{played['neural_minus_synth']:+.3f}** (target at least +0.15)",
        f"- cheats scoring at or above the lower of the two honest classes: **{cheats}**",
        f"- own prompt above the contradicting one: **{played['own_prompt_wins']} of {played['pairs']}** tracks"
        " (target at least 80%)",
        "",
        "### What owning CLAP and Audiobox Aesthetics is worth",
        "",
        "The standard profile's learned music judges are public networks nothing floors; each is paid at most its"
        " floored counterpart plus a slack (lib/services/music.py). Mean score with both at half their range, at"
        " their top (an attacker who owns them), and at their top without the ceilings:",
        "",
    ]
    owned = played["learned_owned"]
    lines.append(
        table(
            ["class", "at half", "owned", "owned, no ceilings"],
            [[n, *(f"{owned[n][k]:.3f}" for k in SCORES)] for n in (music.NEURAL, music.SYNTH)],
        )
    )
    lines += [
        f"- the synth's gain from owning them: **{owned['synth_gain_capped']:+.3f}** with the ceilings"
        f" ({owned['synth_gain_uncapped']:+.3f} without; target at most +0.05)",
        f"- the neural tracks keep **{owned['neural_kept_at_top']['mean']:.1%}** of their uncapped top (least"
        f" {owned['neural_kept_at_top']['least']:.1%}; target at least 95%)",
    ]
    return "\n".join(lines) + "\n"


def plot(data: dict, path: str) -> str:
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4.5))
    for ax, (part, title) in ((left, ("speech_classes", "speech (TTS)")), (right, ("music_classes", "music"))):
        means = sorted(data[part]["findings"]["mean_score"].items(), key=lambda item: item[1])
        ax.barh([n for n, _ in means], [m for _, m in means], color="C0")
        ax.set(xlim=(0, 1), xlabel="score (mean)", title=f"{title}, {data['profile']} profile")
        ax.tick_params(axis="y", labelsize=7)
    return save_figure(fig, path)
