"""The validator's score of one answer as a torch function of its samples: what the white-box attacker
climbs. It is the service's own declaration (parts, ceilings, penalties, ranges) over the measures the
Judge writes, with every measure that has a gradient recomputed from the samples and the rest (Whisper's
word error rate, WORLD's pitch, the signal statistics) held at the values the real Judge gave the clean
answer: the attack checks those with the real Judge as it goes (pgd.py) instead of differentiating them.

A measure the score did not move with at the last step (where a ceiling binds, the judge above it has no
gradient) is computed without a backward pass at the next: what a careful attacker with little compute
does; it costs at most one step's contribution of that measure when the ceiling stops binding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.scoring.declaration import Judging, Range

MeasureFunction = Callable[[object], object]  # torch samples (at the measure's rate) -> torch scalar


LEAK = 0.05  # the gradient outside a range: an attacker climbs out of a range's flat floor too


def ranged(scale: Range, value):
    """`Range.__call__` on a torch scalar: the same value (clipped to 0..1), with a small gradient outside the
    range as well (a measure below its floor still has a way up)."""
    import torch

    linear = (torch.as_tensor(value, dtype=torch.float32) - scale.zero) / (scale.one - scale.zero)
    return linear.clamp(0.0, 1.0) + LEAK * (linear - linear.detach())


def score(judging: Judging, measures: Mapping[str, object]):
    """`Judging.breakdown(measures).score` where the measures may be torch scalars (tested equal on floats)."""
    import torch

    weighted, total, gates = torch.zeros(()), 0.0, []
    for part in judging.parts:
        present = [name for name in part.measures if name in measures]
        if not present:
            continue
        weights = [part.mix.get(name, 1.0) for name in present]
        value = sum(w * ranged(part.measures[n], measures[n]) for w, n in zip(weights, present)) / sum(weights)
        capping = [name for name in part.ceiling.measures if name in measures] if part.ceiling else []
        if capping:
            bound = sum(ranged(part.ceiling.measures[n], measures[n]) for n in capping) / len(capping)
            value = torch.minimum(value, bound + part.ceiling.slack)
        weighted, total = weighted + part.weight * value, total + part.weight
        if part.gate:
            gates.append(1.0 - part.gate * (1.0 - value))
    result = weighted / total if total > 0 else weighted
    for gate in gates:
        result = result * gate
    for penalty in judging.penalties:
        if penalty.measure in measures:
            result = result * (1.0 - penalty.share * ranged(penalty.range, measures[penalty.measure]))
    return result.clamp(0.0, 1.0)


def best_possible(judging: Judging, fixed: Mapping[str, float], movable) -> float:
    """The score if every `movable` measure took its best value (the top of its part's range, the bottom of its
    penalty's, the top of its ceiling's) and the rest stayed as they are: where an attack can stop."""
    best: dict[str, float] = {}
    for part in judging.parts:
        for name, scale in part.measures.items():
            best.setdefault(name, scale.one)
        if part.ceiling is not None:
            for name, scale in part.ceiling.measures.items():
                best.setdefault(name, scale.one)
    for penalty in judging.penalties:
        best.setdefault(penalty.measure, penalty.range.zero)
    return judging.breakdown({**fixed, **{name: best[name] for name in movable if name in best}}).score


@dataclass
class Surrogate:
    """One answer's score as a function of its samples: `differentiable` measures (name -> function of the
    samples), the clean answer's `fixed` measures for the rest, and `transform(samples, generator)`, the random
    view an EOT attacker averages over (identity for plain PGD)."""

    judging: Judging
    differentiable: dict[str, MeasureFunction]
    fixed: dict[str, float]
    transform: Optional[Callable[[object, object], object]] = None
    derivatives: dict[str, float] = field(default_factory=dict)  # the last step's d score / d measure

    def __call__(self, samples, generator=None):
        import torch

        view = self.transform(samples, generator) if (self.transform and generator is not None) else samples
        values = {}
        for name, function in self.differentiable.items():
            if self.derivatives.get(name, 1.0) != 0.0:
                value = function(view)
                values[name] = value if value.requires_grad else value.detach().requires_grad_(True)
            else:  # the score did not move with it last step (a ceiling binds): no backward pass through it
                with torch.no_grad():
                    values[name] = function(view).detach().requires_grad_(True)
        total = score(self.judging, {**self.fixed, **values})
        grads = torch.autograd.grad(total, list(values.values()), retain_graph=True, allow_unused=True)
        self.derivatives = {n: float(g) if g is not None else 0.0 for n, g in zip(values, grads)}
        return total

    def measures(self, samples) -> dict[str, float]:
        """The differentiable measures of `samples`, as floats (for reports and checks)."""
        import torch

        with torch.no_grad():
            return {name: float(function(samples)) for name, function in self.differentiable.items()}
