"""The ways from answers to weights the incentive study compares, behind the simulator's `Scorer`:

- `PerService`: the validator's own code (`lib/validator/record.py`, `incentive.py` and `mechanisms.py`): a
  record per uid and service in wall-clock time that starts again on a change, a curve per service, weights
  published per mechanism once the validator's evidence supports them; every service on one mechanism (the
  layout of a 256-uid subnet, combined by an even split) or one mechanism per service;
- `before.Issue33`: the curve before issue 42, kept to measure against.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from audionet.lib.validator.incentive import Curve
from audionet.lib.validator.mechanisms import Plan
from audionet.lib.validator.record import Record


class Layout:
    """Where a scorer's weights go: every service on one mechanism, or a mechanism per service (a dataclass
    mixin over `services` and `one_mechanism`)."""

    services: tuple[str, ...]
    one_mechanism: bool

    @property
    def where(self) -> str:
        return "one mechanism" if self.one_mechanism else "a mechanism per service"

    @property
    def rows(self) -> tuple[str, ...]:
        return self.services

    @property
    def mechanisms(self) -> tuple[str, ...]:
        return ("all",) if self.one_mechanism else self.services


@dataclass(frozen=True)
class PerService(Layout):
    curve: Curve
    services: tuple[str, ...]
    one_mechanism: bool = True  # every service on mechanism 0, combined by an even split

    @property
    def label(self) -> str:
        c, m = self.curve, self.curve.memory
        return (
            f"record {m.record_s / 3600:g} h, a drop at {m.drop_h:g} SE, a rise at {m.rise_h:g} (allowance {m.change_k:g}); "
            f"published at {c.ready_error:.0%}; floor {c.floor:g}, {c.reference_count}th best, z {c.confidence_z:g}; "
            f"{self.where}"
        )

    @property
    def plan(self) -> Plan:
        return Plan(
            {s: 0 if self.one_mechanism else i for i, s in enumerate(self.services)}, dict.fromkeys(self.services, 1.0)
        )

    def start(self, shape) -> Record:
        return Record.empty(shape)

    def tick(self, state: Record, seconds: float) -> None:
        state.decay(seconds, self.curve.memory)

    def observe(self, state: Record, index, reward, failed) -> None:
        state.add(index, reward, self.curve.memory, failed)

    def forget(self, state: Record, uids) -> None:
        for f in fields(state):
            getattr(state, f.name)[..., uids] = 0.0

    def restart(self, state: Record, uids) -> None:
        """A new signed model: a new record, as for a new hotkey."""
        self.forget(state, uids)

    def doubtful(self, state: Record, serving) -> np.ndarray:
        """[validator, uid]: a uid whose answers may have changed in some service, or whose record there is too
        young to support its weight (asked first)."""
        return (state.doubtful(self.curve.memory) | self.curve.unsettled(state, serving)).any(axis=1)

    def publish(self, state: Record, validator: int, serving, scored) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows [service, uid], weights [mechanism, uid], published [mechanism]): a mechanism is published where
        every service it pays that this validator scores is ready and somebody earned something."""
        mine = Record(*(getattr(state, f.name)[validator] for f in fields(state)))
        rows = self.curve.weights(mine, serving) * np.asarray(scored)[:, None]
        ready = self.curve.ready(mine, serving)
        plan = self.plan
        weights = np.stack([plan.combine(dict(zip(self.services, rows)), m) for m in plan.used])  # unscored: zeros
        ready_by = {s: bool(r) for s, r, on in zip(self.services, ready, scored) if on}
        published = np.array([not plan.holding(m, ready_by) for m in plan.used]) & (weights.sum(axis=-1) > 0)
        return rows, weights, published
