"""The validator's memory: per service, a record of each uid's answers in wall-clock time (`record.Record`),
the model each uid last signed, and which services each uid serves.

Saved atomically (temp file, fsync, rename, fsync dir) after every round so a crash at any point leaves
either the old or the new state on disk, and a restart continues from exactly the saved floats (JSON keeps
float repr); the time the records were last brought up to is saved with them, so the time a validator was
down passes for its records as it would have had it run. From version 5 the round's coverage (which miners this
pass has still to ask, when each was last scored: `coverage.Coverage.as_json`) is saved in the same write, so a
restart continues the pass of the rounds it saved; a version-4 state has none and starts a new pass. Version 6
added each record's change statistics and the failed query of a run, the model each uid last signed per
service, and the block weights were last set on each mechanism; older states load with none of them (no change
under way, no model known yet: the first signed model starts no new record).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from audionet.lib.core.atomic import atomic_file
from audionet.lib.core.errors import ConfigError
from audionet.lib.validator.incentive import CURVE, Curve
from audionet.lib.validator.record import Record, estimate

STATE_VERSION = 6
MODEL_CHARS = 128  # a signed model name is at most this long on the wire (protocol.ResponseMeta)
# States before version 4 kept an EMA per scored round (weight LEGACY_ALPHA, the default then) and a count of
# scored rounds; each is carried over as at most LEGACY_ANSWERS answers of its estimate, so new answers soon
# outweigh it. A version-1 state has no counts: its uids with a score count as scored this many rounds.
LEGACY_ALPHA = 0.005
LEGACY_ANSWERS = 20
V1_ROUNDS = 10_000


def finite_unit(value: float) -> float:
    """NaN/inf -> 0, everything clipped into [0, 1]."""
    value = float(value)
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


@dataclass
class ScoreState:
    """`services`: the services this validator scores; records of other services found in a saved state are
    kept in the file, not used."""

    services: tuple[str, ...] = ()
    hotkeys: list[str] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    serves: dict[str, list[bool]] = field(default_factory=dict)  # per service and uid, from its signed health
    models: dict[str, list[str]] = field(default_factory=dict)  # per service and uid: the model it last signed ("")
    round: int = 0
    last_weights_block: int = -1  # the last block weights were set on any mechanism
    mechanism_blocks: dict[int, int] = field(default_factory=dict)  # mechid -> the block weights were last set there
    time: float = 0.0  # wall-clock seconds the records were last brought up to (0: never)
    coverage: Optional[dict] = None  # the validator's Coverage.as_json() as of this round (None: none saved)
    curve: Curve = field(default=CURVE, compare=False)

    def __post_init__(self) -> None:
        self.services = tuple(self.services)
        for service in self.services:
            self.records.setdefault(service, Record.empty(len(self.hotkeys)))
        for service in self.records:
            self.serves.setdefault(service, [True] * len(self.hotkeys))
            self.models.setdefault(service, [""] * len(self.hotkeys))

    def __eq__(self, other) -> bool:
        if not isinstance(other, ScoreState):
            return NotImplemented
        return self.to_json() == other.to_json() and self.services == other.services

    def sync(self, hotkeys: list[str]) -> list[int]:
        """Follow the metagraph; a uid whose hotkey changed starts again from nothing.
        Returns the uids that were reset."""
        reset = [uid for uid, old in enumerate(self.hotkeys[: len(hotkeys)]) if old != hotkeys[uid]]
        for service, record in list(self.records.items()):
            grown = Record.empty(len(hotkeys))
            kept = min(len(hotkeys), len(self.hotkeys))
            grown.put(slice(0, kept), record.take(slice(0, kept)))
            grown.put(reset, Record.empty(len(reset)))
            self.records[service] = grown
            column = (self.serves[service] + [True] * len(hotkeys))[: len(hotkeys)]
            self.serves[service] = [True if uid in reset else value for uid, value in enumerate(column)]
            names = (self.models[service] + [""] * len(hotkeys))[: len(hotkeys)]
            self.models[service] = ["" if uid in reset else name for uid, name in enumerate(names)]
        self.hotkeys = list(hotkeys)
        return reset

    def advance(self, now: float) -> None:
        """Bring every record up to wall-clock time `now` (seconds)."""
        if self.time > 0:
            for record in self.records.values():
                record.decay(now - self.time, self.curve.memory)
        self.time = max(self.time, now)

    def update(self, service: str, uid: int, reward: float, failed: bool = False, model: Optional[str] = None) -> float:
        """One scored answer of `uid` in `service` (`failed`: the query itself failed; `model`: the model the answer
        is signed with, None for none); its new estimate. A model other than the one the uid last signed starts
        its record again, as a new hotkey would."""
        record = self.records[service]
        if model is not None:
            model, known = str(model)[:MODEL_CHARS], self.models[service][uid]
            if known and model != known:
                record.put(uid, Record.empty(1))
            self.models[service][uid] = model
        record.add(uid, finite_unit(reward), self.curve.memory, failed)
        return float(estimate(record.take([uid])).value[0])

    def set_served(self, uid: int, services) -> None:
        """What a uid's signed health says it serves: it is asked, and paid, for those only."""
        for service, column in self.serves.items():
            column[uid] = service in services

    def served(self, uid: int) -> set[str]:
        return {s for s in self.services if self.serves[s][uid]}

    def estimates(self) -> dict[str, list[float]]:
        """Per scored service and uid: the estimated mean reward (0 before its first answer)."""
        return {s: [float(v) for v in estimate(self.records[s]).value] for s in self.services}

    def answers(self) -> dict[str, list[int]]:
        """Per scored service and uid: answers scored."""
        return {s: [int(v) for v in self.records[s].count] for s in self.services}

    def weights(self) -> dict[str, list[float]]:
        """Per scored service: the curve's L1-normalised weights over uids; all zeros where nobody earned
        anything."""
        return {
            s: [float(w) for w in self.curve.weights(self.records[s], self.serves[s])] if self.hotkeys else []
            for s in self.services
        }

    def curve_view(self) -> dict[str, dict]:
        """Per scored service, how the curve weighs each uid (what the weights follow from): its lower confidence
        bound, whether it is eligible, and the reference the bounds are measured against."""
        view = {}
        for s in self.services:
            bound, eligible = self.curve.bounds(self.records[s], self.serves[s])
            reference = self.curve.reference(bound, eligible)
            view[s] = {
                "reference": float(reference.reshape(-1)[0]) if reference.size else 0.0,
                "bounds": [float(b) for b in bound],
                "eligible": [bool(e) for e in eligible],
            }
        return view

    def doubted(self) -> list[int]:
        """Uids whose answers in a scored service may have changed (a change statistic past half its threshold)
        or whose record there is too young to support their weight (`Curve.unsettled`): asked first, up to half
        a round."""
        doubt = np.zeros(len(self.hotkeys), bool)
        for s in self.services:
            doubt |= self.records[s].doubtful(self.curve.memory) | self.curve.unsettled(self.records[s], self.serves[s])
        return [int(uid) for uid in np.flatnonzero(doubt)]

    def typical_errors(self) -> dict[str, float]:
        """Per scored service: the typical serving uid's standard error relative to the reference (the validator
        publishes a service's weights once it is within `Curve.ready_error`; inf while nothing is known)."""
        return {s: float(self.curve.typical_error(self.records[s], self.serves[s])) for s in self.services}

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "round": self.round,
            "last_weights_block": self.last_weights_block,
            "time": self.time,
            "hotkeys": self.hotkeys,
            "records": {s: r.as_lists() for s, r in self.records.items()},
            "serves": self.serves,
            "models": self.models,
            "mechanism_blocks": {str(m): b for m, b in self.mechanism_blocks.items()},
            "coverage": self.coverage,
        }

    def save(self, path: str) -> None:
        atomic_write_json(path, self.to_json())

    @classmethod
    def load(cls, path: str, services: tuple[str, ...], curve: Curve = CURVE) -> ScoreState:
        """The saved state, or a fresh one when there is none (older versions are carried over)."""
        if not os.path.exists(path):
            return cls(services, curve=curve)
        try:
            with open(path) as handle:
                data = json.load(handle)
            if not isinstance(data, dict) or data.get("version") not in (1, 2, 3, 4, 5, STATE_VERSION):
                raise ValueError(f"not a version-{STATE_VERSION} audionet validator state")
            hotkeys = [str(h) for h in data["hotkeys"]]
            coverage = data.get("coverage")
            if not isinstance(coverage, (dict, type(None))):
                raise TypeError("coverage is not an object")
            if data["version"] >= 4:  # version 5 added the coverage, 6 the change statistics and models
                records = {s: Record.from_lists(r, len(hotkeys)) for s, r in dict(data["records"]).items()}
                serves = {s: [bool(v) for v in column] for s, column in dict(data.get("serves", {})).items()}
            else:
                records, serves = _carried(data, len(hotkeys)), {}
            models = {s: [str(v)[:MODEL_CHARS] for v in column] for s, column in dict(data.get("models", {})).items()}
            blocks = {int(m): int(b) for m, b in dict(data.get("mechanism_blocks", {})).items()}
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ConfigError(f"cannot read validator state {path}: {error}") from None
        state = cls(
            services,
            hotkeys=hotkeys,
            records=records,
            serves=serves,
            models=models,
            round=int(data["round"]),
            last_weights_block=int(data["last_weights_block"]),
            mechanism_blocks=blocks,
            time=float(data.get("time", 0.0)),
            coverage=coverage,
            curve=curve,
        )
        state.sync(state.hotkeys)  # pad columns if the file predates a service
        return state


def _carried(data: dict, size: int) -> dict[str, Record]:
    """Records from a state of version 1-3 (an EMA per scored round and, from version 2, round counts)."""
    emas = dict(data.get("emas", data.get("scores")))  # versions 1 and 2 called the EMAs "scores"
    records = {}
    for service, column in emas.items():
        ema = np.array([finite_unit(v) for v in column][:size] + [0.0] * max(0, size - len(column)))
        if data["version"] == 1:
            count = np.where(ema > 0, V1_ROUNDS, 0)
        else:
            counts = [max(0, int(v)) for v in dict(data["counts"]).get(service, [])][:size]
            count = np.array(counts + [0] * (size - len(counts)), float)
        seen = 1.0 - (1.0 - LEGACY_ALPHA) ** count
        value = np.divide(ema, seen, out=np.zeros_like(ema), where=seen > 0)
        answers = np.minimum(count, LEGACY_ANSWERS)
        record = Record.empty(size)
        record.total[:] = value * answers
        record.total_sq[:] = value**2 * answers
        record.weight[:] = record.weight_sq[:] = answers
        record.count[:] = count
        records[service] = record
    return records


def atomic_write_json(path: str, data) -> None:
    with atomic_file(path, "w", ".json") as handle:
        json.dump(data, handle, indent=1)
