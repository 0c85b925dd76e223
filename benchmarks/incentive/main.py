"""Incentive study: which scores-to-weights curve pays for quality, measured on real score samples.

Takes the per-round raw scores of the adversary study (the honest offline backends, the espeak engine and
every attack of the catalogue, judged by the validator's Judge), simulates a 256-uid subnet through rounds
of reward, EMA and weights (the validator's own `Curve`) and Yuma consensus, checks the properties a
subnet needs, sweeps the curve's constants and picks the fastest-reacting curve that keeps them all.

    audionet-bench incentive [--samples benchmarks/results/cpu-x86_64-2core/adversaries-offline.json] [--rounds 600]
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from dataclasses import asdict, dataclass, replace

import numpy as np

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import RESULTS_DIR, command_line
from audionet.benchmarks.incentive.checks import check_all, class_shares, traces
from audionet.benchmarks.incentive.sim import Group, MinerClass, Population, classes_from_report, simulate
from audionet.lib.core.config import Parser, positive_int
from audionet.lib.validator.incentive import CURVE, Curve

SAMPLES = os.path.join(RESULTS_DIR, "cpu-x86_64-2core", "adversaries-offline.json")


@dataclass(frozen=True)
class Linear(Curve):
    """The mapping before this study: the EMA from 0, weights linear in the mean over services."""

    def weights(self, ema: np.ndarray, count: np.ndarray) -> np.ndarray:
        mean = np.atleast_2d(ema).mean(axis=0)
        return mean / mean.sum() if mean.sum() > 0 else np.zeros_like(mean)


CURRENT = Linear(alpha=0.1, eligible_after=0, floor=0.0, power=1.0, debias=False)  # with the rank reward
VALIDATOR_STAKES = (0.3, 0.25, 0.15, 0.15, 0.1, 0.05)  # the last one lags
LAG = 20  # rounds behind: a validator that sets weights from a stale state


@dataclass(frozen=True)
class Softmax(Curve):
    """exp((relative - 1) / temperature): the competition curve (SN9, SN21 use temperature 0.01)."""

    temperature: float = 0.01

    def shape(self, relative: np.ndarray) -> np.ndarray:
        return np.exp((relative - 1.0) / self.temperature)


@dataclass(frozen=True)
class Candidate:
    family: str
    curve: Curve
    rank_reward: bool = False  # 0.5 x raw + 0.5 x rank within the round (the rule before this study)

    @property
    def label(self) -> str:
        c = self.curve
        shape = f"T {c.temperature:g}" if isinstance(c, Softmax) else f"floor {c.floor:g}, power {c.power:g}"
        gate = f"; service floor {c.service_floor:g}" if c.service_floor is not None else ""
        ema = f"alpha {c.alpha:g}" + (f", eligible after {c.eligible_after}" if c.debias else ", from 0")
        return f"{self.family} ({shape}{gate}; {ema}{'; rank reward' if self.rank_reward else ''})"


def rank_reward(raw: np.ndarray) -> np.ndarray:
    """The within-round reward before this study: 0.5 x raw + 0.5 x the average rank among the non-zero
    scores of the round (best = 1); 0 stays 0."""
    alive = raw > 0
    if not alive.any():
        return np.zeros_like(raw)
    live = np.sort(raw[alive])
    below = np.searchsorted(live, raw, side="left")
    ties = np.searchsorted(live, raw, side="right") - below
    rank = (below + (ties + 1) / 2) / len(live)
    return np.where(alive, 0.5 * raw + 0.5 * rank, 0.0)


def population(classes: list[MinerClass], rounds: int) -> Population:
    """256 uids: 9 neural (one a twin with the very same scores), 100 cheats spread over the attacks, the
    profile's blind spots (5 uids each), the espeak class, and at half-way 10 neural newcomers and 5
    newcomers of the best-scoring cheat (a cheat that registers fresh hoping for luck)."""
    by_kind = {kind: [c for c in classes if c.kind == kind] for kind in ("neural", "cheap", "cheat", "blind spot")}
    neural, cheap = by_kind["neural"][0], by_kind["cheap"][0]
    cheats, blind = by_kind["cheat"], by_kind["blind spot"]
    half = rounds // 2
    groups = [Group(neural, 8), Group(neural, 1, twin=True), Group(neural, 10, joins=half)]
    groups.append(Group(max(cheats, key=lambda c: c.mean), 5, joins=half))
    groups += [Group(c, 5) for c in blind]
    per_cheat = np.diff(np.linspace(0, 100, len(cheats) + 1).round().astype(int))
    groups += [Group(c, int(n)) for c, n in zip(cheats, per_cheat)]
    groups.append(Group(cheap, 256 - sum(g.count for g in groups)))
    return Population(groups)


def evaluate(candidate: Candidate, classes, rounds: int, seed: int, validators: int = 1, copies: bool = True) -> dict:
    """Run the population through `candidate`; `validators` > 1: six validators (the last lagging) and
    Yuma consensus; `copies`: also run it with a single neural uid (N copies vs one copy)."""
    pop = population(classes, rounds)
    reward = rank_reward if candidate.rank_reward else None
    multi = validators > 1
    options = dict(validators=validators, stakes=VALIDATOR_STAKES, lag=(0,) * 5 + (LAG,)) if multi else {}
    run = simulate(pop, candidate.curve, rounds, seed, reward=reward, **options)
    alone = None
    if copies:
        one = Population([Group(g.miner, 1) if i == 0 else g for i, g in enumerate(pop.groups) if i != 1])
        alone = simulate(one, candidate.curve, rounds, seed + 1, reward=reward, **options)
    checks = check_all(pop, run, alone, candidate.curve, consensus=multi)
    return {
        "candidate": candidate,
        "checks": checks,
        "shares": class_shares(pop, run, consensus=multi),
        "traces": traces(pop, run, consensus=multi),
    }


def floor_slack(classes: list[MinerClass]) -> float:
    """Twice the largest round-to-round noise of a neural miner's score, relative to its mean, over the
    services (rounded to 0.05): a good miner two standard errors unlucky is not shut out by the gate."""
    neural = next(c for c in classes if c.kind == "neural")
    noise = max(float(np.std(s, ddof=1) / np.mean(s)) for s in neural.samples.values() if np.mean(s) > 0)
    return round(round(2 * noise / 0.05) * 0.05, 2)


def candidates(slack: float, quick: bool = False) -> list[Candidate]:
    """The sweep; `quick`: only the shapes, at the EMA and gate constants of the library's CURVE."""
    grid = itertools.product((0.005, 0.01, 0.02, 0.05, 0.1), (3, 10), (None, 0.8, 0.85, 0.9))
    if quick:
        grid = [(CURVE.alpha, CURVE.eligible_after, CURVE.service_floor)]
    out = []
    for alpha, eligible, gate in grid:
        base = Curve(alpha, eligible, floor=0.0, power=1.0, service_floor=gate, floor_slack=slack if gate else 0.0)
        for floor, power in itertools.product((0.7, 0.8, 0.9), (1, 2)):
            out.append(Candidate("floor + power", replace(base, floor=floor, power=power)))
        out += [Candidate("power of score/max", replace(base, power=p)) for p in (1, 2, 4, 9)]
        out += [Candidate("softmax", Softmax(**asdict(base), temperature=t)) for t in (0.02, 0.05)]
    return out


def passes(result: dict) -> bool:
    return all(check.ok for check in result["checks"].values())


def preference(result: dict) -> tuple:
    """Among curves that keep every property: the shortest memory the noise allows (largest alpha: the
    subnet notices a miner that gets worse or better soonest), then the earliest eligibility, then the
    calmest weights."""
    curve, checks = result["candidate"].curve, result["checks"]
    return (-curve.alpha, curve.eligible_after, checks["steady weight moves"].value)


def study(classes, rounds: int, seed: int, quick: bool = False, progress=None) -> dict:
    """Sweep every candidate with one validator; the preferred passing ones are then run with N copies
    and under Yuma consensus, and the first that keeps every property there too is chosen."""
    swept = []
    for candidate in candidates(floor_slack(classes), quick):
        swept.append(evaluate(candidate, classes, rounds, seed, copies=False))
        if progress:
            progress()
    chosen = consensus = None
    for result in sorted(filter(passes, swept), key=preference):
        single = evaluate(result["candidate"], classes, rounds, seed)
        consensus = evaluate(result["candidate"], classes, rounds, seed, validators=len(VALIDATOR_STAKES))
        if passes(single) and passes(consensus):
            chosen = single
            break
    best_of_family = {}
    for result in sorted(swept, key=lambda r: (-sum(c.ok for c in r["checks"].values()), preference(r))):
        best_of_family.setdefault(result["candidate"].family, result["candidate"])
    shown = [Candidate("current", CURRENT, rank_reward=True)] + list(best_of_family.values())
    if chosen is not None:
        shown.append(replace(chosen["candidate"], rank_reward=True))
    return {
        "swept": swept,
        "chosen": chosen,
        "consensus": consensus if chosen is not None else None,
        "shown": [evaluate(c, classes, rounds, seed) for c in shown],
    }


def build_parser(prog: str) -> Parser:
    parser = study_parser(prog, __doc__, where="beside the samples, <out>/<samples' device-slug>/")
    parser.add_argument("--samples", default=SAMPLES, help="adversary study JSON with per-round raw scores")
    parser.add_argument("--rounds", type=positive_int, default=600, help="scored rounds to simulate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="sweep the shapes only, at the library's EMA constants")
    return parser


def main(argv: list[str], prog: str = "audionet-bench incentive") -> int:
    from rich.progress import Progress

    from audionet.benchmarks.incentive.report import write

    args = build_parser(prog).parse_args(argv)
    try:
        with open(args.samples) as handle:
            report = json.load(handle)
    except (OSError, ValueError) as error:
        print(f"{prog}: cannot read samples {args.samples}: {error}", file=sys.stderr)
        return 2
    classes = classes_from_report(report)
    with Progress() as progress:
        task = progress.add_task("candidate curves", total=len(candidates(0.0, args.quick)))
        found = study(classes, args.rounds, args.seed, args.quick, lambda: progress.advance(task))
    slug = os.path.basename(os.path.dirname(os.path.abspath(args.samples)))
    print(write(found, classes, args, slug, f"incentive-{report['profile']}", command_line(prog, argv), CURVE))
    return 0 if found["chosen"] is not None else 1
