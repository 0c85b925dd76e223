"""The attack study against a Judge whose ASR hears noise of its own (lib/scoring/listening.py): whose seeds judge
what. The attacker knows the defence and judges every candidate by the mean over `own` fresh draws of its own
seeds (EOT over the validator's noise); the reward counted is each kept answer re-judged with the validator's
seeds, drawn from a stream the attacker never reads and the same for every answer of a run (the clean one too,
so a gain compares like with like). A Judge that hears the answer as sent needs one seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean, pstdev

import numpy as np

from audionet.benchmarks.attacks import pgd
from audionet.benchmarks.attacks.materials import Case
from audionet.lib.core.audio import Audio
from audionet.lib.scoring.jobs import Verdict
from audionet.lib.scoring.listening import SEED_BITS

ATTACKER, VALIDATOR = 1, 2  # the two seed streams under the study's --seed


@dataclass
class Seeds:
    own: int  # the attacker's draws per check
    validator: tuple[int, ...]  # the validator's seeds, the same for every answer
    rng: np.random.Generator = field(repr=False)  # the attacker's stream

    @classmethod
    def for_study(cls, seed: int, own: int, validator: int) -> Seeds:
        drawn = np.random.default_rng([seed, VALIDATOR]).integers(0, 2**SEED_BITS, validator)
        return cls(own, tuple(int(s) for s in drawn), np.random.default_rng([seed, ATTACKER]))

    def attacker(self, judged) -> list[int]:
        """Fresh seeds of the attacker's own for one check (one for a Judge that hears no noise)."""
        return [int(s) for s in self.rng.integers(0, 2**SEED_BITS, self.own if hears_noise(judged) else 1)]

    def counted(self, judged) -> tuple[int, ...]:
        return self.validator if hears_noise(judged) else self.validator[:1]


def hears_noise(judged) -> bool:
    return judged.judge.listening.std > 0


def scores(judged, case, samples: np.ndarray, seeds) -> list[float]:
    """The Judge's score of `samples` as `case`'s answer under each seed."""
    audio = Audio(samples, case.audio.sample_rate)
    return [judged.verdict(case, audio, seed).score for seed in seeds]


def mean_score(judged, case, samples: np.ndarray, seeds) -> float:
    return fmean(scores(judged, case, samples, seeds))


def spread(values: list[float]) -> float:
    """The population std of one answer's scores over seeds: how far one verdict strays from their mean."""
    return pstdev(values) if len(values) > 1 else 0.0


@dataclass(frozen=True)
class Clean:
    """The clean answer as the attacker sees it (a verdict under its own seed, for the measures it holds, and its
    mean over its own draws) and as the validator judges it (the mean over the validator's seeds)."""

    seen: Verdict
    seen_score: float
    counted: float


def clean_of(judged, case: Case, seeds: Seeds, counted: float) -> Clean:
    """`counted`: the clean answer's mean score over the validator's seeds."""
    own = seeds.attacker(judged)
    seen = [judged.verdict(case, case.audio, seed) for seed in own]
    return Clean(seen[0], fmean(v.score for v in seen), counted)


def outcome_row(
    judged,
    case: Case,
    bound: float,
    kind: str,
    outcome: pgd.Outcome,
    clean: Clean,
    seeds: Seeds,
    seconds: float,
    log,
) -> dict:
    """The kept answer re-judged with the validator's seeds: the reward counted."""
    counted = mean_score(judged, case, outcome.samples, seeds.counted(judged))
    log(
        f"{case.label}: L-inf {bound:g} {kind} {outcome.steps_run} steps, reward {clean.counted:.3f} -> "
        f"{counted:.3f} (the attacker saw {clean.seen_score:.3f} -> {outcome.score:.3f}; {seconds:.0f} s)"
    )
    return {
        "bound": bound,
        "attack": kind,
        "steps": outcome.steps_run,
        "score": counted,
        "seen": outcome.score,  # the attacker's own view of its pick
        "gain": counted - clean.counted,
        "snr_db": pgd.snr_db(case.audio.samples, outcome.samples),
        "trace": outcome.trace,
        "seconds": seconds,
    }
