"""Who answers in the incentive study: miner behaviours drawn from measured score samples, and a 256-uid subnet.

Every answer a simulated uid gives is one of the per-round raw scores the adversary study measured
(`benchmarks/adversaries/main.py`: the honest offline backends, the cheap engines and every attack of the
catalogue, judged by the validator's Judge), drawn at random (bootstrap):
- an honest miner of quality q answers with the honest backend's scores times q (clipped to 1): a miner at
  0.90 of the best scores 90 % of what the best scores, with the same relative noise;
- the cheap class answers with the cheap engines where the catalogue has one (espeak TTS, the espeak + WORLD
  cloner) and the best backend elsewhere (the offline profile has no cheaper music than procedural music);
- a cheat answers with its attack's scores in the services the attack fits, and serves only those;
- a partial cheat answers with the best-scoring attack of each service in a quarter of its answers.
A uid's true relative quality in a service is the mean of what it answers over the best incumbents' mean.

The strategic miners of issue 42 change at the events: a bait and switch (1.00 -> 0.80 under the same model
name), upgrades (0.85 -> 1.00, saying so in the signed model or not), a cheat that turns honest, and a new hotkey
at 1.00 to compare them with; flaky miners are down an hour a day, failing or declaring it in their health.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

HONEST = "honest"  # the adversary study's name for the best offline backend of a service
BEST, NEWCOMER_QUALITY, DROPPED_QUALITY = 1.0, 1.1, 0.85
BAIT_QUALITY, UPGRADED_FROM = 0.80, 0.85  # a bait and switch serves this after the events; an upgrade before
SPREAD = tuple(round(q, 2) for q in np.arange(0.70, 1.001, 0.02))  # honest qualities, relative to the best
PARTIAL_RATE = 0.25  # a partial cheat's share of cheated answers
# Miners go down (deployments, crashes, a provider's outage): a tenth of the subnet is down an hour a day, at
# random. Without such changes the consensus stands still, and copying it is as good as judging.
FLAKY, DECLARING, OUTAGE_H, OUTAGE_EVERY_H = 24, 12, 1.0, 24.0
N_UIDS = 256


@dataclass(frozen=True)
class Samples:
    """Measured per-round raw scores per service and miner of the adversary study."""

    profile: str
    scores: dict[str, dict[str, np.ndarray]]  # service -> miner -> scores
    cheap_engines: frozenset[str]
    blind_spots: dict[str, frozenset[str]]  # service -> attacks the profile is documented as unable to tell

    @property
    def services(self) -> list[str]:
        return list(self.scores)

    def honest(self, service: str, quality: float = BEST) -> np.ndarray:
        return np.clip(self.scores[service][HONEST] * quality, 0.0, 1.0)

    def attacks(self) -> list[str]:
        """Every cheat of the catalogue (neither the honest backend, a cheap engine nor a blind spot)."""
        names = dict.fromkeys(m for by in self.scores.values() for m in by)
        return [m for m in names if m != HONEST and m not in self.cheap_engines and not self.blind(m)]

    def blind(self, attack: str) -> bool:
        return any(attack in spots for spots in self.blind_spots.values())

    def best_attack(self, service: str) -> str:
        cheats = [m for m in self.scores[service] if m in self.attacks()]
        return max(cheats, key=lambda m: self.scores[service][m].mean())


def samples_from_report(report: dict) -> Samples:
    """From an adversary study report (`benchmarks/adversaries/main.py` JSON)."""
    from audionet.benchmarks.adversaries.attacks import CATALOGUE

    scores: dict[str, dict[str, list[float]]] = {}
    blind: dict[str, frozenset[str]] = {}
    for service, result in report["services"].items():
        for row in result["results"]:
            scores.setdefault(service, {}).setdefault(row["miner"], []).append(row["score"])
        spots = result.get("blind_spots", {})
        blind[service] = frozenset(a for a, profiles in spots.items() if report["profile"] in profiles)
    engines = frozenset(a.name for a in CATALOGUE if a.cheap_engine)
    arrays = {s: {m: np.asarray(v, float) for m, v in by.items()} for s, by in scores.items()}
    return Samples(report["profile"], arrays, engines, blind)


@dataclass(frozen=True)
class Group:
    """`count` uids that answer alike. `answers`: service -> the scores it draws from (only the services it
    serves); `later`: what it answers from hour `changes_h` of the events on (a turned cheat, a drop);
    `joins_h`: a newcomer that registers then (its uids answer as `before` until then, under another hotkey)."""

    name: str
    kind: str  # honest | cheap | cheat | partial cheat | copy | specialist | turned | dropped | newcomer | blind
    count: int
    quality: float  # true relative quality (honest and its variants), for the weight-vs-quality curve
    answers: dict[str, np.ndarray]
    later: dict[str, np.ndarray] = field(default_factory=dict)
    changes_h: float | None = None
    joins_h: float | None = None
    outage_every_h: float | None = None  # down for OUTAGE_H at random, this often on average
    declares: bool = False  # while down it says so in its signed health (not asked, not paid) instead of failing
    new_model: bool = False  # at `changes_h` it signs a new model name (a new record, as for a new hotkey)


def cheap_answers(samples: Samples) -> dict[str, np.ndarray]:
    out = {}
    for service, by in samples.scores.items():
        engine = next((m for m in by if m in samples.cheap_engines), HONEST)
        out[service] = by[engine]
    return out


def population(samples: Samples, copies: int = 6, newcomer_h: float = 0.0) -> list[Group]:
    """256 uids: the honest spread (4 uids per quality from 0.70 to 1.00 of the best), every cheat of the
    catalogue (4 uids each), the blind spot (3), partial cheats (4), `copies` copies of one model at 0.95,
    one-service specialists at the best (2 per service), flaky miners at 0.95 (24 that fail while down, 12 that
    say so), and at the events: 3 best miners that turn to the 1 s loop, 3 whose quality drops to 0.85, 3 bait
    and switches to 0.80, 8 + 8 upgrades from 0.85 to 1.00 (saying so or not), 3 cheats that turn honest, and
    newcomers that register then in place of cheap uids (3 at 1.1 of the best, 8 at 1.00); the cheap class for
    the rest."""
    services = samples.services
    honest = {s: samples.honest(s) for s in services}
    groups = [Group(f"honest {q:.2f}", "honest", 4, q, {s: samples.honest(s, q) for s in services}) for q in SPREAD]
    for attack in samples.attacks():
        fits = {s: by[attack] for s, by in samples.scores.items() if attack in by}
        groups.append(Group(attack, "cheat", 4, 0.0, fits))
    for attack in {a for spots in samples.blind_spots.values() for a in spots}:
        fits = {s: by[attack] for s, by in samples.scores.items() if attack in by}
        groups.append(Group(f"{attack} (blind spot)", "blind", 3, 0.0, fits))
    partial = {s: mixture(honest[s], samples.scores[s][samples.best_attack(s)], PARTIAL_RATE) for s in services}
    groups.append(Group("partial cheat (25 %)", "partial cheat", 4, BEST, partial))
    if copies:
        groups.append(
            Group(f"{copies} copies of one model", "copy", copies, 0.95, {s: samples.honest(s, 0.95) for s in services})
        )
    for s in services:
        groups.append(Group(f"{s} specialist", "specialist", 2, BEST, {s: honest[s]}))
    loop = {s: samples.scores[s]["1 s loop"] for s in services}
    groups.append(Group("turns to the 1 s loop", "turned", 3, BEST, honest, later=loop, changes_h=newcomer_h))
    flaky = {s: samples.honest(s, 0.95) for s in services}
    groups.append(Group("down an hour a day", "flaky", FLAKY, 0.95, flaky, outage_every_h=OUTAGE_EVERY_H))
    groups.append(
        Group(
            "down an hour a day, says so",
            "declares",
            DECLARING,
            0.95,
            flaky,
            outage_every_h=OUTAGE_EVERY_H,
            declares=True,
        )
    )
    dropped = {s: samples.honest(s, DROPPED_QUALITY) for s in services}
    groups.append(Group("drops to 0.85", "dropped", 3, BEST, honest, later=dropped, changes_h=newcomer_h))
    bait = {s: samples.honest(s, BAIT_QUALITY) for s in services}
    groups.append(Group("bait and switch 1.00 -> 0.80", "bait", 3, BEST, honest, later=bait, changes_h=newcomer_h))
    before = {s: samples.honest(s, UPGRADED_FROM) for s in services}
    for kind, says in (("upgrade", True), ("quiet upgrade", False)):
        name = f"upgrades 0.85 -> 1.00{', says so' if says else ', same model name'}"
        groups.append(Group(name, kind, 8, BEST, before, later=honest, changes_h=newcomer_h, new_model=says))
    groups.append(Group("cheat (1 s loop) turns honest", "reformed", 3, BEST, loop, later=honest, changes_h=newcomer_h))
    better = {s: samples.honest(s, NEWCOMER_QUALITY) for s in services}
    cheap = cheap_answers(samples)
    groups.append(Group("newcomer at 1.1", "newcomer", 3, NEWCOMER_QUALITY, cheap, later=better, joins_h=newcomer_h))
    groups.append(Group("newcomer at 1.00", "new hotkey", 8, BEST, cheap, later=honest, joins_h=newcomer_h))
    groups.append(Group("cheap class (espeak)", "cheap", N_UIDS - sum(g.count for g in groups), 0.0, cheap))
    return groups


def mixture(base: np.ndarray, other: np.ndarray, rate: float) -> np.ndarray:
    """Scores of which exactly a share `rate` come from `other` (both repeated to a common length)."""
    common = np.lcm(len(base), len(other))
    return np.concatenate(
        [np.tile(base, (round(1 / rate) - 1) * common // len(base)), np.tile(other, common // len(other))]
    )


def relative_quality(samples: Samples, answers: np.ndarray, service: str) -> float:
    """True relative quality: mean answer over the best incumbents' mean."""
    return float(np.mean(answers) / samples.honest(service).mean())
