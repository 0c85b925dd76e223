"""Trains the naturalness student (models/eval/robust_mos.py), the judge that caps DistillMOS where a
perturbation could buy it, and writes its weights and a report.

    audionet-bench naturalness-student [--sentences 270] [--epochs 30] [--weights models/eval/weights/...]

Corpus: benchmarks/attacks/corpus.py (Kokoro, espeak and both WORLD cloners, clean and degraded, labelled by
DistillMOS, which the report shows beside the student). The student does not learn DistillMOS everywhere: it learns
where DistillMOS may be believed, with a margin. Natural engines (Kokoro, its clones, whatever is done to them)
must score at least `NATURAL_FLOOR` (above DistillMOS's range: a ceiling that never binds on them); robotic
ones (espeak, the espeak cloner, degraded or not) at most `ROBOTIC_CEILING`, a full MOS below the bottom of
the naturalness range (2.0): an attacker has to lift the student across that margin before the ceiling gives
anything. (Teaching robotic clips their own DistillMOS instead left them 0.6 MOS below the range on average,
and attacks reached it at half the budget; adding noise to espeak raises DistillMOS, the student does not
follow either way.)

Features: the floored band statistics of robust_mos.py, keeping only the spreads and frame-to-frame
changes whose separation of natural from robotic speech is at least `SELECT_RATIO` times what a
perturbation of `--eps` moves them (measured here by gradient ascent on each feature alone); the band
means are left out (they carry the spectral tilt, which a brighter honest voice has too).

Training is adversarial: each batch's robotic clips are attacked (projected gradient ascent on the
student's output, `--inner` steps within `--eps`), and any rise of the output is penalised.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from audionet.benchmarks.attacks.corpus import NATURAL, RATE, ROBOTIC, Corpus, load_corpus, make_corpus, save_corpus
from audionet.benchmarks.common.flags import one_line_errors, study_parser
from audionet.benchmarks.common.results import command_line, pyplot, save_figure, table, write_result
from audionet.lib.core.config import Parser, positive_int

NATURAL_FLOOR = 4.5  # natural engines: at least this (above DistillMOS's range top, 4.3)
ROBOTIC_CEILING = 1.0  # robotic engines: at most this (the naturalness range starts at 2.0)
SELECT_RATIO = 3.5
CACHE = "~/.cache/audionet"


def ascend(network, x, bound, steps: int, output=None):
    """Projected signed-gradient ascent of `output(network, samples)` (default: the student's output) within
    +-bound, from a random start inside half the bound: the training adversary and the report's attacker."""
    import torch

    output = output or (lambda net, samples: net(samples))
    bound = torch.as_tensor(bound, dtype=x.dtype)
    delta = (torch.rand_like(x) * 2 - 1) * bound * 0.5
    for _ in range(steps):
        delta.requires_grad_(True)
        (gradient,) = torch.autograd.grad(output(network, x + delta).sum(), delta)
        delta = torch.maximum(torch.minimum(delta.detach() + bound / 2.5 * gradient.sign(), bound), -bound)
    return (x + delta).detach()


def select_features(corpus: Corpus, bound: float, clean: np.ndarray) -> tuple[list[int], dict]:
    """The spread and change features (not the band means) whose natural-robotic separation is at least
    SELECT_RATIO times how far `bound` moves them (each attacked alone, 15 steps, on 6 robotic clips)."""
    import torch

    from audionet.models.eval.robust_mos import N_BANDS, build_features

    features = build_features()
    engines = np.array(corpus.engine)
    with torch.no_grad():
        values = np.stack([features(torch.from_numpy(corpus.clips[i])[None])[0].numpy() for i in np.flatnonzero(clean)])
    natural = np.isin(engines[clean], NATURAL)
    spread = np.sqrt((values[natural].var(0) + values[~natural].var(0)) / 2) + 1e-6
    separation = (values[natural].mean(0) - values[~natural].mean(0)) / spread
    robotic = [i for i in np.flatnonzero(clean & ~np.isin(engines, NATURAL)) if len(corpus.clips[i]) >= 2 * RATE][:6]
    x = torch.from_numpy(np.stack([corpus.clips[i][: 2 * RATE] for i in robotic]))
    with torch.no_grad():
        start = features(x)
    moved = np.zeros(len(separation))
    for j in range(N_BANDS, len(separation)):  # spreads, changes and the level spread: the means are left out
        sign = float(np.sign(separation[j]))
        attacked = ascend(None, x, bound, 15, lambda _, s, j=j, sign=sign: sign * features(s)[:, j])
        with torch.no_grad():
            moved[j] = float(((features(attacked)[:, j] - start[:, j]) * sign).mean()) / spread[j]
    ratio = np.abs(separation) / np.maximum(moved, 0.05)
    chosen = [j for j in range(N_BANDS, len(separation)) if ratio[j] >= SELECT_RATIO]
    return chosen, {"separation": separation.tolist(), "moved": moved.tolist(), "chosen": chosen}


def train(corpus: Corpus, chosen: list[int], train_rows: np.ndarray, args, tick):
    import torch

    from audionet.models.eval.robust_mos import build_network

    torch.manual_seed(args.seed)
    network = build_network(args.hidden, chosen)
    with torch.no_grad():
        values = torch.stack([network.features(torch.from_numpy(corpus.clips[i])[None])[0, chosen] for i in train_rows])
    network.centre.copy_(values.mean(0))
    network.scale.copy_(values.std(0) + 1e-3)
    optimiser = torch.optim.Adam(network.parameters(), lr=2e-3, weight_decay=1e-4)
    natural = np.isin(np.array(corpus.engine), NATURAL)
    rng = np.random.default_rng(args.seed)
    by_length = train_rows[np.argsort([len(corpus.clips[i]) for i in train_rows])]
    batches = [by_length[i : i + 16] for i in range(0, len(by_length), 16)]
    for _ in range(args.epochs):
        rng.shuffle(batches)
        for rows in batches:
            size = min(min(len(corpus.clips[i]) for i in rows), 2 * RATE)
            starts = [int(rng.integers(0, len(corpus.clips[i]) - size + 1)) for i in rows]
            x = torch.from_numpy(np.stack([corpus.clips[i][s : s + size] for i, s in zip(rows, starts)]))
            is_natural = torch.from_numpy(natural[rows])
            out = network(x)
            # hinges: natural clips cost only below their floor (heavily: an honest answer must never be capped),
            # robotic ones only above their ceiling, clean and at the worst point of an attack on them
            loss = torch.where(
                is_natural, 8 * torch.relu(NATURAL_FLOOR - out) ** 2, torch.relu(out - ROBOTIC_CEILING) ** 2
            )
            loss = loss.mean()
            robotic = ~is_natural
            if robotic.any():
                bounds = torch.from_numpy(rng.choice([0.5, 1.0, 1.5], int(robotic.sum())).astype(np.float32))[:, None]
                attacked = ascend(network, x[robotic], bounds * args.eps, args.inner)
                loss = loss + args.adversarial * torch.relu(network(attacked) - ROBOTIC_CEILING).pow(2).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        tick()
    return network.eval()


def evaluate(network, corpus: Corpus, rows: np.ndarray, bounds: list[float], steps: int) -> dict:
    """On held-out sentences: the student's raw output per engine (clean and degraded) next to DistillMOS, and
    how far gradient ascent on the student moves robotic clips at each bound (its Lipschitz-type bound)."""
    import torch

    with torch.no_grad():
        output = {int(i): float(network(torch.from_numpy(corpus.clips[i])[None])[0]) for i in rows}
    engines = np.array(corpus.engine)
    groups = {}
    for engine in (*NATURAL, *ROBOTIC):
        for label, degraded in (("clean", False), ("degraded", True)):
            chosen = [i for i in rows if corpus.engine[i] == engine and bool(corpus.degraded[i]) == degraded]
            if chosen:
                student = [output[int(i)] for i in chosen]
                groups[f"{engine}, {label}"] = {
                    "clips": len(chosen),
                    "distillmos": float(np.mean([corpus.mos[i] for i in chosen])),
                    "student": float(np.mean(student)),
                    "student_min": float(np.min(student)),
                    "student_max": float(np.max(student)),
                }
    robotic = [i for i in rows if engines[i] in ROBOTIC and not corpus.degraded[i]][:8]
    moved = {}
    for bound in bounds:
        gains = []
        for i in robotic:
            attacked = ascend(network, torch.from_numpy(corpus.clips[i])[None], bound, steps)
            with torch.no_grad():
                gains.append(float(network(attacked)[0]) - output[int(i)])
        moved[str(bound)] = {"mean": float(np.mean(gains)), "max": float(np.max(gains))}
    return {"groups": groups, "moved": moved, "attack_steps": steps, "attacked_clips": len(robotic)}


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.robust_mos import WEIGHTS

    parser = study_parser(prog, __doc__)
    parser.add_argument("--sentences", type=positive_int, default=270, help="sentences in the corpus")
    parser.add_argument("--epochs", type=positive_int, default=30)
    parser.add_argument("--hidden", type=positive_int, default=16, help="hidden units of the student")
    parser.add_argument("--eps", type=float, default=0.004, help="the training adversary's L-infinity bound")
    parser.add_argument("--inner", type=positive_int, default=3, help="the training adversary's steps")
    parser.add_argument("--adversarial", type=float, default=3.0, help="weight of the adversarial penalty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weights", default=str(WEIGHTS), help="where the trained weights go")
    parser.add_argument(
        "--corpus",
        default=None,
        help=f"the labelled corpus (.npz): read if it exists, else made and saved (default: {CACHE}/"
        "naturalness-corpus-<sentences>-<seed>.npz)",
    )
    return parser


def main(argv: list[str], prog: str = "audionet-bench naturalness-student") -> int:
    args = build_parser(prog).parse_args(argv)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def measure(args, command: str) -> int:
    import torch

    from audionet.lib.core.devices import device_slug
    from audionet.models.eval.robust_mos import save_network

    torch.set_num_threads(1)
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

    done = {"sentences": 0, "epochs": 0}

    def counter(key: str, total: int):
        def tick() -> None:
            done[key] += 1
            if done[key] % max(1, total // 10) == 0 or done[key] == total:
                log(f"{key}: {done[key]} of {total}")

        return tick

    path = Path(args.corpus or f"{CACHE}/naturalness-corpus-{args.sentences}-{args.seed}.npz").expanduser()
    if path.exists():
        corpus = load_corpus(path)
        log(f"corpus read from {path}")
    else:
        corpus = make_corpus(args.sentences, args.seed, counter("sentences", args.sentences))
        save_corpus(corpus, path)
        log(f"corpus saved to {path}")
    held_out = np.random.default_rng(args.seed).random(args.sentences) < 0.2
    test = held_out[np.array(corpus.sentence)]
    clean = np.array([not d for d in corpus.degraded])
    chosen, selection = select_features(corpus, args.eps, clean & ~test)
    log(f"{len(chosen)} features chosen")
    network = train(corpus, chosen, np.flatnonzero(~test), args, counter("epochs", args.epochs))
    report = evaluate(network, corpus, np.flatnonzero(test), [0.001, 0.003, 0.01], 60)
    save_network(network, Path(args.weights))
    log(f"weights written to {args.weights}")
    data = {
        "settings": {
            k: getattr(args, k) for k in ("sentences", "epochs", "hidden", "eps", "inner", "adversarial", "seed")
        },
        "natural_floor": NATURAL_FLOOR,
        "selection": selection,
        **report,
    }
    write_result(
        args.out, device_slug("cpu"), "naturalness-student", data, markdown(data), command, lambda p: plot(data, p)
    )
    print(markdown(data))
    return 0


def markdown(data: dict) -> str:
    rows = [
        [
            name,
            g["clips"],
            f"{g['distillmos']:.2f}",
            f"{g['student']:.2f}",
            f"{g['student_min']:.2f}",
            f"{g['student_max']:.2f}",
        ]
        for name, g in data["groups"].items()
    ]
    moved = [[bound, f"{m['mean']:+.3f}", f"{m['max']:+.3f}"] for bound, m in data["moved"].items()]
    s = data["settings"]
    return (
        "\n".join(
            [
                "# The naturalness student",
                "",
                f"{s['sentences']} sentences, a fifth held out (below); {len(data['selection']['chosen'])} features; "
                f"adversarial training at L-inf {s['eps']:g} ({s['inner']} steps, weight {s['adversarial']:g}), "
                f"{s['epochs']} epochs. Natural engines are taught to stay at or above {data['natural_floor']}, robotic "
                "ones at their clean clip's DistillMOS.",
                "",
                table(["held-out clips", "n", "DistillMOS", "student (mean)", "student (min)", "student (max)"], rows),
                f"Gradient ascent on the student alone ({data['attack_steps']} steps, {data['attacked_clips']} robotic "
                "clips): how far its output rises.",
                "",
                table(["L-inf bound", "rise (mean)", "rise (max)"], moved),
            ]
        )
        + "\n"
    )


def plot(data: dict, path: str) -> str:
    fig, ax = pyplot().subplots(figsize=(7, 4))
    names = list(data["groups"])
    ax.barh(names, [data["groups"][n]["student"] for n in names], color="C0", label="student")
    ax.scatter([data["groups"][n]["distillmos"] for n in names], names, color="C3", zorder=3, label="DistillMOS")
    ax.axvline(data["natural_floor"], color="C2", linestyle="--", linewidth=1)
    ax.set(xlabel="MOS scale (student output unclipped)", title="naturalness student, held-out clips")
    ax.legend(fontsize=8)
    return save_figure(fig, path)
