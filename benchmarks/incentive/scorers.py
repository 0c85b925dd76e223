"""The ways from answers to weights the incentive study compares, behind the simulator's `Scorer`:

- `PerService`: the validator's own code (`lib/validator/incentive.py` and `mechanisms.py`): a record per
  uid and service in wall-clock time, a curve per service, one mechanism per service (or all services on one
  mechanism, combined by an even split);
- `Gated`: the curve before issue 33, kept here to measure against: an EMA per scored round, the best mature
  uid as the reference, per-service gates at 0.85 of the best multiplied into one weight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from audionet.lib.validator.incentive import Curve, Record
from audionet.lib.validator.mechanisms import Plan


@dataclass(frozen=True)
class PerService:
    curve: Curve
    services: tuple[str, ...]
    one_mechanism: bool = False  # every service on mechanism 0, combined by an even split

    @property
    def label(self) -> str:
        c = self.curve
        memory = (
            f"record {c.memory.record_s / 3600:g} h, recent {c.memory.recent_s / 3600:g} h (z {c.memory.change_z:g})"
        )
        where = "one mechanism" if self.one_mechanism else "a mechanism per service"
        return (
            f"floor {c.floor:g}, power {c.power:g}, q{c.reference_quantile:g}, z {c.confidence_z:g}; {memory}; {where}"
        )

    @property
    def rows(self) -> tuple[str, ...]:
        return self.services

    @property
    def mechanisms(self) -> tuple[str, ...]:
        return ("all",) if self.one_mechanism else self.services

    @property
    def plan(self) -> Plan:
        return Plan(
            {s: 0 if self.one_mechanism else i for i, s in enumerate(self.services)}, dict.fromkeys(self.services, 1.0)
        )

    def start(self, shape) -> Record:
        return Record.empty(shape)

    def tick(self, state: Record, seconds: float) -> None:
        state.decay(seconds, self.curve.memory)

    def observe(self, state: Record, index, reward) -> None:
        state.add(index, reward)

    def forget(self, state: Record, uids) -> None:
        for f in fields(state):
            getattr(state, f.name)[..., uids] = 0.0

    def weights(self, state: Record, validator: int, serving, scored) -> np.ndarray:
        mine = Record(*(getattr(state, f.name)[validator] for f in fields(state)))
        return self.curve.weights(mine, serving) * scored[:, None]

    def combine(self, rows: np.ndarray) -> np.ndarray:
        plan, by_service = self.plan, dict(zip(self.services, rows))
        return np.stack([plan.combine(by_service, m) for m in plan.used])


@dataclass(frozen=True)
class Gated:
    """The curve before issue 33 (`lib/validator/incentive.py` at 8b8a9c7): per scored round an EMA with
    weight `alpha`, divided by 1 - (1 - alpha)^n; no pay before `eligible_after` rounds (the fewest of any
    service); each service relative to the best uid with a full memory (1/alpha rounds); a gate per service
    that opens over 0.05 above `service_floor` of the best (lower for young uids, by `floor_slack` standard
    errors); the gates multiplied, times the mean relative score; one weight per uid."""

    alpha: float = 0.005
    eligible_after: int = 3
    service_floor: float = 0.85
    floor_slack: float = 0.6
    label: str = "before: gated (alpha 0.005, gates at 0.85 of the best)"
    rows: tuple[str, ...] = ("all",)
    mechanisms: tuple[str, ...] = ("all",)

    def combine(self, rows: np.ndarray) -> np.ndarray:
        return rows

    def start(self, shape) -> dict:
        return {"ema": np.zeros(shape), "count": np.zeros(shape)}

    def tick(self, state, seconds: float) -> None:
        return None  # its memory counts scored rounds, not time

    def observe(self, state, index, reward) -> None:
        state["ema"][index] = self.alpha * np.clip(reward, 0, 1) + (1 - self.alpha) * state["ema"][index]
        state["count"][index] += 1

    def forget(self, state, uids) -> None:
        state["ema"][..., uids] = 0.0
        state["count"][..., uids] = 0.0

    def _error(self, count):
        beta, n = 1.0 - self.alpha, np.maximum(count, 1.0)
        with np.errstate(over="ignore"):
            return np.sqrt(self.alpha * (1 - beta ** (2 * n)) / ((2 - self.alpha) * (1 - beta**n) ** 2))

    def weights(self, state, validator: int, serving, scored) -> np.ndarray:
        ema, count = state["ema"][validator][scored], state["count"][validator][scored]
        seen = 1.0 - (1.0 - self.alpha) ** count
        score = np.divide(ema, seen, out=np.zeros_like(ema), where=seen > 0)
        rounds = count.min(axis=0)
        eligible = rounds >= self.eligible_after
        mature = rounds >= max(self.eligible_after, math.ceil(1 / self.alpha))
        known = mature if mature.any() else eligible
        if not known.any():
            return np.zeros((1, ema.shape[1]))
        reference = score[:, known].max(axis=1)
        relative = np.minimum(
            np.divide(score, reference[:, None], out=np.zeros_like(score), where=reference[:, None] > 0), 1.0
        )
        floor = self.service_floor - self.floor_slack * (self._error(rounds) - self._error(np.inf))
        gate = np.clip((relative - floor) / 0.05, 0.0, 1.0).prod(axis=0)
        raw = np.where(eligible, gate * relative.mean(axis=0), 0.0)
        return (raw / raw.sum() if raw.sum() > 0 else raw)[None, :]
