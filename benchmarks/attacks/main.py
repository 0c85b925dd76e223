"""White-box attacks on the validator's own Judge, undefended and defended: how much reward a faint
perturbation buys a cheap engine's answer, next to what honest backends score.

    audionet-bench attacks [--services tts,vc,music] [--clips 3] [--steps 200] [--bounds 0.0003,0.001,0.003,0.01]

The attacker knows everything (code, weights, declaration) and climbs the service's whole score as the
Judge computes it (surrogate.py), by projected gradient ascent under an L-infinity bound on the 16-bit
samples it sends (pgd.py): plain PGD on the deterministic Judge, and at the headline bound also EOT-PGD,
averaging over random shifts and gains (what an attacker unsure of the validator's exact view would do),
and a random search without any gradient (sign noise at the bound, the best of `--search` draws): what a
Judge whose verdict swings under any faint change pays by chance.
Each answer is checked by the real Judge as the attack goes, the best one it saw kept. The deployed Judge's ASR hears
noise of its own, seeded per verdict: the attacker checks with its own seeds (`--own-draws`, EOT over the noise),
and the reward counted is the kept answer re-judged with `--validator-draws` validator seeds it never saw
(listening.py).
"Undefended" is the same Judge without the judges that cannot be bought (their ceilings are then off, its ASR
hears the answer as sent).
Writes <out>/<device-slug>/attacks-<profile>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from statistics import fmean
from typing import Optional

import numpy as np

from audionet.benchmarks.attacks import pgd
from audionet.benchmarks.attacks.listening import Clean, Seeds, clean_of, mean_score, outcome_row, scores, spread
from audionet.benchmarks.attacks.materials import Case, cases_for
from audionet.benchmarks.attacks.measures import differentiable
from audionet.benchmarks.attacks.report import SETTINGS, markdown, plot, summarise
from audionet.benchmarks.attacks.surrogate import Surrogate, best_possible
from audionet.benchmarks.common.evaluation import judge_from_flags, stripped, undefended
from audionet.benchmarks.common.flags import add_service_flags, one_line_errors, study_parser
from audionet.benchmarks.common.results import command_line, write_result
from audionet.lib.core.audio import Audio
from audionet.lib.core.config import Parser, positive_int
from audionet.lib.scoring.declaration import Judging
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import registry

SHIFT_S, GAIN_DB = 0.01, 1.0  # EOT's random view: a delay of up to 10 ms and a gain within +-1 dB


def random_view(rate: int):
    """EOT's transformation: a random delay (leading zeros) and gain, drawn from the attacker's generator."""
    import torch

    def view(samples, generator):
        shift = int(torch.randint(0, int(SHIFT_S * rate) + 1, (1,), generator=generator))
        gain = 10 ** ((float(torch.rand((), generator=generator)) * 2 - 1) * GAIN_DB / 20)
        return torch.nn.functional.pad(samples, (shift, 0)) * gain

    return view


@dataclass(frozen=True)
class Judged:
    """One of the study's two Judges for one service: its evaluators and its declaration."""

    judge: Judge
    judging: Judging

    def verdict(self, case: Case, audio: Audio, seed: Optional[int] = None):
        """`seed`: the listening noise's (None: a secret one)."""
        job = registry.get(case.service).job(case.request, audio, case.label, seed=seed)
        return self.judge.score(self.judging, [job], remember=False)[0]


def judges_for(name: str, defended: Judge, bare: Judge) -> dict[str, Judged]:
    """The undefended Judge (no guard evaluators, the declaration without ceilings and gates: the Judge before
    the defence) and the defended one (the Judge as deployed); one entry where they are the same (a
    declaration with no ceiling reads nothing from the guards)."""
    judging = registry.get(name).judging
    plain = stripped(judging)
    if plain == judging:
        return {"undefended": Judged(bare, plain)}
    return {"undefended": Judged(bare, plain), "defended": Judged(defended, judging)}


def attack_case(judged: Judged, case: Case, settings: pgd.Settings, clean: Clean, seeds: Seeds, log) -> dict:
    """One attack on one answer: the surrogate of the service's score, checked by the real Judge with the
    attacker's seeds, the answer kept re-judged with the validator's."""
    service = registry.get(case.service)
    expect = service.expect(case.request)
    functions = differentiable(judged.judge.evaluators, judged.judging, expect, case.audio.sample_rate)
    fixed = {k: v for k, v in clean.seen.measures.items() if k not in functions}
    view = random_view(case.audio.sample_rate) if settings.eot else None
    objective = Surrogate(judged.judging, functions, fixed, view)
    started = time.perf_counter()

    def check(samples: np.ndarray) -> float:
        return mean_score(judged, case, samples, seeds.attacker(judged))

    top = best_possible(judged.judging, clean.seen.measures, functions)
    kind = f"EOT-PGD x{settings.eot}" if settings.eot else "PGD"

    def progress(step: int, value: float, score: float) -> None:
        log(f"{case.label}: L-inf {settings.bound:g} {kind} step {step}: surrogate {value:.3f}, Judge {score:.3f}")

    outcome = pgd.attack(
        objective, case.audio.samples, settings, check, clean_score=clean.seen_score, ceiling=top, progress=progress
    )
    run = outcome_row(judged, case, settings.bound, kind, outcome, clean, seeds, time.perf_counter() - started, log)
    held = sorted(judged.judging.measure_names() & set(fixed))  # read by the score, no gradient: not attacked
    return {**run, "best_possible": top, "measures": objective.measures(_tensor(outcome.samples)), "held": held}


def search_case(
    judged: Judged, case: Case, bound: float, draws: int, clean: Clean, seeds: Seeds, seed: int, log
) -> dict:
    """The attacker without a gradient: random sign perturbations at the bound, the best the real Judge saw (by the
    attacker's own seeds)."""
    started = time.perf_counter()

    def check(samples: np.ndarray) -> float:
        return mean_score(judged, case, samples, seeds.attacker(judged))

    outcome = pgd.random_search(case.audio.samples, bound, draws, check, clean.seen_score, seed)
    kind = f"random search x{draws}"
    return outcome_row(judged, case, bound, kind, outcome, clean, seeds, time.perf_counter() - started, log)


def _tensor(samples: np.ndarray):
    import torch

    return torch.from_numpy(samples.astype(np.float32))


def run_service(name: str, judges: dict[str, Judged], args, sources, log) -> dict:
    cases = cases_for(name, args.clips, args.tracks, args.seed, sources)
    seeds = Seeds.for_study(args.seed, args.own_draws, args.validator_draws)
    honest, attacked = [], []
    for case in cases:
        judged_clean = {
            w: scores(judged, case, case.audio.samples, seeds.counted(judged)) for w, judged in judges.items()
        }
        row = {"label": case.label, "material": case.material, **{w: fmean(v) for w, v in judged_clean.items()}}
        row["spread"] = {w: spread(v) for w, v in judged_clean.items()}  # over the validator's seeds
        if not case.attacked:
            honest.append(row)
            continue
        row["runs"] = {which: [] for which in judges}
        for which, judged in judges.items():
            if which not in args.attack and len(judges) > 1:
                continue  # judged clean (the targets compare with it), not attacked; a service with one Judge is
                # attacked whichever is asked: its deployed Judge is the undefended one
            clean = clean_of(judged, case, seeds, row[which])
            for bound in args.bounds:
                headline = bound == args.headline
                for eot in attack_kinds(args, name, headline):
                    steps = args.steps if headline else args.sweep_steps
                    settings = pgd.Settings(bound, steps, eot, args.check_every, seed=args.seed + 1)
                    row["runs"][which].append(attack_case(judged, case, settings, clean, seeds, prefixed(log, which)))
                if headline and args.search:
                    found = search_case(
                        judged, case, bound, args.search, clean, seeds, args.seed + 2, prefixed(log, which)
                    )
                    row["runs"][which].append(found)
        attacked.append(row)
    return {
        "service": name,
        "title": registry.get(name).title,
        "judges": list(judges),
        "honest": honest,
        "attacked": attacked,
    }


def attack_kinds(args, service: str, headline: bool) -> tuple[int, ...]:
    """The gradient attacks at one bound, as EOT samples per step (0: plain PGD)."""
    eot_here = headline and args.eot and service in args.eot_services
    return ((0,) if args.headline_pgd or not eot_here else ()) + ((args.eot,) if eot_here else ())


def prefixed(log, prefix: str):
    return lambda line: log(f"{prefix} {line}")


def build_parser(prog: str) -> Parser:
    from audionet.models.eval.profiles import add_eval_flags

    parser = study_parser(prog, __doc__)
    parser.add_argument("--clips", type=positive_int, default=3, help="attacked answers per service")
    parser.add_argument("--tracks", type=positive_int, default=28, help="honest neural music tracks (28 ship)")
    parser.add_argument(
        "--bounds", type=_floats, default="0.0003,0.001,0.003,0.01", help="L-infinity bounds (full scale = 1)"
    )
    parser.add_argument("--headline", type=float, default=0.003, help="the bound the targets are set at")
    parser.add_argument("--steps", type=positive_int, default=200, help="PGD steps at the headline bound")
    parser.add_argument("--sweep-steps", type=positive_int, default=50, help="PGD steps at the other bounds")
    parser.add_argument("--eot", type=int, default=2, help="EOT samples per step at the headline bound (0: no EOT)")
    parser.add_argument(
        "--eot-services", type=registry.service_list, default="tts", help="the services EOT-PGD also attacks"
    )
    parser.add_argument(
        "--headline-pgd",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="plain PGD at the headline bound beside EOT-PGD (--no-headline-pgd: EOT-PGD alone where it runs, "
        "the plain PGD of the same --seed being an earlier result)",
    )
    parser.add_argument(
        "--search",
        type=int,
        default=0,
        help="random-search draws at the headline bound, no gradient (0: none, as before)",
    )
    parser.add_argument("--check-every", type=positive_int, default=25, help="steps between real-Judge checks")
    parser.add_argument(
        "--own-draws", type=positive_int, default=2, help="the attacker's own listening-noise draws per check"
    )
    parser.add_argument(
        "--validator-draws", type=positive_int, default=4, help="validator seeds each counted reward is judged with"
    )
    parser.add_argument(
        "--attack", type=_names, default="undefended,defended", help="which Judges to attack (both are judged clean)"
    )
    parser.add_argument(
        "--name", default="", help="stem of the result files (default: attacks-<profile>[-<judge>][-<services>])"
    )
    add_service_flags(parser)
    add_eval_flags(parser)
    return parser


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = set(names) - {"undefended", "defended"}
    if unknown or not names:
        raise ValueError(f"--attack takes undefended and/or defended, not {text!r}")
    return names


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def without_eot(args) -> list[str]:
    """The attacked services that `--eot N` leaves out (not in --eot-services)."""
    return [name for name in args.services if args.eot and name not in args.eot_services]


def main(argv: list[str], prog: str = "audionet-bench attacks") -> int:
    args = build_parser(prog).parse_args(argv)
    left_out = without_eot(args)
    if left_out:  # --eot-services defaults to tts: a vc or music run would skip EOT-PGD unsaid
        print(f"{prog}: no EOT-PGD on {', '.join(left_out)} (--eot-services)", file=sys.stderr)
    return one_line_errors(prog, lambda: measure(args, command_line(prog, argv)))


def measure(args, command: str) -> int:
    from audionet.lib.core.devices import device_slug

    defended, profile = judge_from_flags(args)
    bare = undefended(defended)
    sources = registry.sources_from_flags(args, args.services)
    started = time.perf_counter()

    def log(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True)

    data = {
        "profile": profile,
        "evaluators": defended.evaluators.describe(),
        "settings": {k: getattr(args, k) for k in SETTINGS},
        "services": {},
    }
    for name in args.services:
        log(f"{name}: judging and attacking")
        data["services"][name] = run_service(name, judges_for(name, defended, bare), args, sources.get(name), log)
        data["services"][name]["findings"] = summarise(data["services"][name], args.headline)
    slug = device_slug(defended.evaluators.device)
    only = "" if set(args.attack) == {"undefended", "defended"} else "-" + "-".join(args.attack)
    if set(args.services) != set(registry.names()):  # a subset's run is a file of its own
        only += "-" + "-".join(args.services)
    write_result(
        args.out, slug, args.name or f"attacks-{profile}{only}", data, markdown(data), command, lambda p: plot(data, p)
    )
    print(markdown(data))
    return 0
