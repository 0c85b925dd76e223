"""How a service is judged, declared as data: which gates and analyses run, and how the raw measures they
write become the 0..1 score.

    score = weighted mean of the parts present x product of the penalties x product of the parts' gates

A part is the mean of its measures, each mapped to 0..1 by its `Range` (at most its `Ceiling`, a robust judge's
bound, where it declares one); a part none of whose measures was
measured (its evaluator is off: `--eval.clap none`) is left out and the other weights renormalised,
rather than counted as 0 for everybody. A part with a `gate` also multiplies the score by
1 - gate x (1 - its value): at gate 0.5, an answer whose part is 0 keeps at most half of what its other parts
earn (naturalness gates intelligibility: a robotic voice is not paid for being clear). A penalty multiplies the score by 1 - share x its range's value;
it is 1 when its measure was not measured. A measure that was measured but has no finite value (an
evaluator failed on the clip) takes the floor: its part's value 0, its penalty in full.

Every range of the reward lives in a service's declaration (lib/services/<name>.py, the speech parts
TTS and VC share in lib/services/speech.py); the Judge (judge.py) runs a declaration and never calls back
into a service. `Judging.breakdown(measures)` is the whole arithmetic: a verdict's parts, penalties and
score follow from its measures and the declaration alone.

This module is data and arithmetic only (numpy), so a service can declare its judging without the miner
importing any scoring stack.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass(frozen=True)
class Range:
    """A raw measure's value at which its 0..1 value is 0 (`zero`) and 1 (`one`), linear between and clipped
    outside; `zero` > `one` where lower is better (a word error rate). Not finite: 0."""

    zero: float
    one: float

    def __call__(self, value: Optional[float]) -> float:
        if value is None or not math.isfinite(value):
            return 0.0
        return min(1.0, max(0.0, (value - self.zero) / (self.one - self.zero)))


@dataclass(frozen=True)
class Ceiling:
    """A bound on a part from judges that cannot be bought: the part is at most the mean of `measures`' ranged
    values + `slack`. The part's own judges decide wherever they agree with it; a fooled judge is capped by it."""

    measures: Mapping[str, Range]
    slack: float

    def bound(self, measures: Mapping[str, float]) -> Optional[float]:
        """The cap, or None where none of its measures was measured (their evaluators are off)."""
        present = [name for name in self.measures if name in measures]
        if not present:
            return None
        return sum(self.measures[name](measures[name]) for name in present) / len(present) + self.slack


@dataclass(frozen=True)
class Part:
    """A weighted part of the score: the `mix`-weighted mean (default: equal) of its measures' ranged values,
    over the measures present, at most its `ceiling` where one is declared and measured."""

    name: str
    weight: float
    measures: Mapping[str, Range]
    mix: Mapping[str, float] = field(default_factory=dict)
    ceiling: Optional[Ceiling] = None
    gate: float = 0.0  # the share of the whole score this part also gates (0: a plain weighted part)

    def value(self, measures: Mapping[str, float]) -> Optional[float]:
        value = self.uncapped(measures)
        cap = self.ceiling.bound(measures) if self.ceiling and value is not None else None
        return value if cap is None else min(value, cap)

    def uncapped(self, measures: Mapping[str, float]) -> Optional[float]:
        """What the part's own judges say, before its ceiling; None where none of them was measured."""
        present = [name for name in self.measures if name in measures]
        if not present:
            return None
        weights = [self.mix.get(name, 1.0) for name in present]
        total = sum(weights)
        return sum(w * self.measures[n](measures[n]) for w, n in zip(weights, present)) / total if total else 0.0


@dataclass(frozen=True)
class Penalty:
    """A multiplier of the whole score: 1 - share x range(measure); 1 when the measure was not measured."""

    name: str
    measure: str
    range: Range
    share: float = 1.0

    def factor(self, measures: Mapping[str, float]) -> float:
        if self.measure not in measures:
            return 1.0
        value = measures[self.measure]
        if value is None or not math.isfinite(value):
            return 1.0 - self.share  # measured, but the evaluator failed on the clip: the penalty in full
        return 1.0 - self.share * self.range(value)


@dataclass(frozen=True)
class Analysis:
    """A named step that writes raw measures into each clip: `run(evaluators, clips, timed)`. The built-in
    ones are named by string (lib/scoring/analyses.py); a service of one's own may declare its own."""

    name: str
    run: Callable[..., None]


@dataclass(frozen=True)
class Breakdown:
    parts: dict[str, float]
    penalties: dict[str, float]
    score: float


@dataclass(frozen=True)
class Judging:
    """A service's judging: `service` (its name: timing keys and the duplicate history), `gates` in the order
    they are checked (names the Judge knows: judge.GATES), `analyses` in the order they run, `parts` and
    `penalties`."""

    service: str
    gates: tuple[str, ...]
    analyses: tuple[Union[str, Analysis], ...]
    parts: tuple[Part, ...]
    penalties: tuple[Penalty, ...] = ()

    def breakdown(self, measures: Mapping[str, float]) -> Breakdown:
        """The parts, penalties and 0..1 score of a clip that passed every gate, from its raw measures."""
        parts = {p.name: v for p in self.parts if (v := p.value(measures)) is not None}
        penalties = {p.name: p.factor(measures) for p in self.penalties if p.measure in measures}
        penalties.update(
            {f"{p.name}_gate": 1.0 - p.gate * (1.0 - parts[p.name]) for p in self.parts if p.gate and p.name in parts}
        )
        weights = {p.name: p.weight for p in self.parts if p.name in parts}
        total = sum(weights.values())
        score = sum(weights[name] * parts[name] for name in weights) / total if total > 0 else 0.0
        for factor in penalties.values():
            score *= factor
        return Breakdown(parts, penalties, min(1.0, max(0.0, score)) if math.isfinite(score) else 0.0)

    def measure_names(self) -> set[str]:
        """Every raw measure the parts, their ceilings and the penalties read."""
        ceilings = {name for p in self.parts if p.ceiling for name in p.ceiling.measures}
        return {name for p in self.parts for name in p.measures} | ceilings | {p.measure for p in self.penalties}
