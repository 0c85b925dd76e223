"""The incentive study's machinery: miner classes from measured score samples, a population, rounds of
reward -> EMA -> weights (the validator's own `lib/scoring/incentive.Curve`), and Yuma consensus.

A class of miners answers each service the way one measured miner of the adversary study did: every
scored round a uid of that class draws one of that miner's measured per-round raw scores (bootstrap),
independently per service, per uid and per validator (each validator sends its own prompts). Each round
every uid is scored once by every validator (on a real subnet a validator samples some uids per round;
a round here is one scored round of each uid).

Yuma consensus, from its published description (docs.learnbittensor.org, "Yuma Consensus" and the
epoch): each validator's weights are normalised; a miner's consensus weight is the stake-weighted median
of the validators' weights for it at kappa 0.5 (the largest w that validators holding at least kappa of
the stake give at least); each weight is clipped to it; miner incentive is the stake-weighted sum of the
clipped weights, normalised; a validator's trust is the sum of its clipped (normalised) weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from audionet.lib.validator.incentive import Curve

HONEST = "honest"  # the adversary study's name for the best offline backend of a service
KAPPA = 0.5


@dataclass(frozen=True)
class MinerClass:
    name: str
    kind: str  # neural | cheap | cheat | blind spot
    samples: dict[str, np.ndarray]  # service -> measured per-round raw scores

    @property
    def mean(self) -> float:
        """True mean of the score the validator combines (the mean over services)."""
        return float(np.mean([s.mean() for s in self.samples.values()]))


def classes_from_report(report: dict) -> list[MinerClass]:
    """Miner classes from an adversary study report (`benchmarks/adversaries/main.py` JSON):
    - neural: the best offline backend of every service (Kokoro, Kokoro clone, procedural music);
    - cheap: the catalogue's cheap engines where a service has one (espeak TTS, the espeak + WORLD cloner),
      the best backend elsewhere (procedural music);
    - one class per other attack: that attack where it applies, the best backend elsewhere (a miner
      that cheats on one service and is honest on the others); `blind spot` where the profile is
      documented as unable to tell the attack from honest work."""
    from audionet.benchmarks.adversaries.attacks import CATALOGUE

    services = report["services"]
    by_miner: dict[str, dict[str, list[float]]] = {}
    for name, result in services.items():
        for row in result["results"]:
            by_miner.setdefault(row["miner"], {}).setdefault(name, []).append(row["score"])

    def samples(choice: dict[str, str]) -> dict[str, np.ndarray]:
        return {s: np.asarray(by_miner[choice.get(s, HONEST)][s], float) for s in services}

    engines = {a.name for a in CATALOGUE if a.cheap_engine}
    cheap = {s: m for m, where in by_miner.items() if m in engines for s in where}
    out = [MinerClass("neural (Kokoro)", "neural", samples({})), MinerClass("espeak-class", "cheap", samples(cheap))]
    attacks = [m for m in by_miner if m != HONEST and m not in engines]
    for attack in attacks:
        where = {s: attack for s in by_miner[attack]}
        blind = any(report["profile"] in services[s].get("blind_spots", {}).get(attack, ()) for s in where)
        out.append(MinerClass(attack, "blind spot" if blind else "cheat", samples(where)))
    return out


@dataclass(frozen=True)
class Group:
    miner: MinerClass
    count: int
    joins: int = 0  # the round its uids register
    twin: bool = False  # uids whose every score equals the group before's first uid (identical streams)


@dataclass
class Population:
    groups: list[Group]
    labels: np.ndarray = field(init=False)  # group index per uid

    def __post_init__(self) -> None:
        self.labels = np.repeat(np.arange(len(self.groups)), [g.count for g in self.groups])

    @property
    def size(self) -> int:
        return len(self.labels)

    def uids(self, index: int) -> np.ndarray:
        return np.flatnonzero(self.labels == index)


@dataclass
class Run:
    """Weights per round: `weights[v, t, uid]` for each validator, `incentive[t, uid]` after consensus."""

    weights: np.ndarray
    incentive: np.ndarray
    trust: np.ndarray  # [t, v]
    joins: np.ndarray  # the round each uid registers
    ema: np.ndarray  # the first validator's EMAs at the end [service, uid]
    count: np.ndarray  # and its scored-round counts


def simulate(
    population: Population,
    curve: Curve,
    rounds: int,
    seed: int = 0,
    validators: int = 1,
    stakes: Sequence[float] | None = None,
    lag: Sequence[int] | None = None,
    reward: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Run:
    """`lag[v]`: validator v's weights are those it computed that many rounds earlier (a slow or
    restarted validator); `reward`: within-round rule over one round's raw scores of one service
    (None: the raw score is the reward)."""
    rng = np.random.default_rng(seed)
    n, services = population.size, list(population.groups[0].miner.samples)
    stakes = np.ones(validators) if stakes is None else np.asarray(stakes, float)
    lag = np.zeros(validators, int) if lag is None else np.asarray(lag, int)
    joins = np.array([population.groups[g].joins for g in population.labels])
    # Per service: a padded table of each uid's measured samples, and how many it has.
    tables, lengths = [], []
    for s in services:
        rows = [population.groups[g].miner.samples[s] for g in population.labels]
        width = max(len(r) for r in rows)
        tables.append(np.array([np.pad(r, (0, width - len(r))) for r in rows]))
        lengths.append(np.array([len(r) for r in rows]))
    twins = _twins(population)
    ema = np.zeros((validators, len(services), n))
    count = np.zeros((validators, len(services), n))
    computed = np.zeros((validators, rounds, n))
    for t in range(rounds):
        active = joins <= t
        for k in range(len(services)):
            picks = (rng.random((validators, n)) * lengths[k]).astype(int)
            raw = tables[k][np.arange(n), picks]
            raw[:, twins[:, 0]] = raw[:, twins[:, 1]]
            for v in range(validators):
                got = reward(raw[v, active]) if reward else raw[v, active]
                ema[v, k, active] = curve.update(ema[v, k, active], got)
            count[:, k, active] += 1
        for v in range(validators):
            computed[v, t] = curve.weights(ema[v], count[v])
    weights = np.stack([computed[v, np.maximum(np.arange(rounds) - lag[v], 0)] for v in range(validators)])
    incentive, trust = zip(*(yuma(weights[:, t], stakes) for t in range(rounds)))
    return Run(weights, np.array(incentive), np.array(trust), joins, ema[0], count[0])


def _twins(population: Population) -> np.ndarray:
    """[[twin uid, original uid], ...]: a twin group copies the first uid of the group before it."""
    pairs = []
    for index, group in enumerate(population.groups):
        if group.twin and index > 0:
            original = population.uids(index - 1)[0]
            pairs += [[uid, original] for uid in population.uids(index)]
    return np.array(pairs, int).reshape(-1, 2)


def yuma(weights: np.ndarray, stakes: np.ndarray, kappa: float = KAPPA) -> tuple[np.ndarray, np.ndarray]:
    """(miner incentive, validator trust) from validators' weights [v, uid] and their stakes."""
    totals = weights.sum(axis=1, keepdims=True)
    w = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)
    s = stakes * (totals[:, 0] > 0)  # a validator that set no weights has no say
    if s.sum() <= 0:
        return np.zeros(weights.shape[1]), np.zeros(len(stakes))
    s = s / s.sum()
    consensus = weighted_median(w, s, kappa)
    clipped = np.minimum(w, consensus)
    ranks = s @ clipped
    incentive = ranks / ranks.sum() if ranks.sum() > 0 else ranks
    return incentive, clipped.sum(axis=1)


def weighted_median(w: np.ndarray, s: np.ndarray, kappa: float) -> np.ndarray:
    """Per column: the largest weight that validators holding at least `kappa` of the stake give at least."""
    order = np.argsort(-w, axis=0, kind="stable")  # each column from its highest weight down
    ranked = np.take_along_axis(w, order, axis=0)
    stake_above = np.cumsum(s[order], axis=0)  # stake giving at least the weight on this row
    first = np.argmax(stake_above >= kappa - 1e-12, axis=0)
    return ranked[first, np.arange(w.shape[1])]
