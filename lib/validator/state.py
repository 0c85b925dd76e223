"""The validator's memory: an EMA of rewards per uid and service, and how many rounds scored it.

The EMA's constants and the weights come from `incentive.Curve` (the validator's `CURVE` unless a flag
changes one). Saved atomically (temp file, fsync, rename, fsync dir) after every round so a
crash at any point leaves either the old or the new state on disk, and a
restart continues from exactly the saved floats (JSON keeps float repr).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from audionet.lib.core.errors import ConfigError
from audionet.lib.validator.incentive import CURVE, Curve

STATE_VERSION = 3
# A version-1 state has EMAs but no round counts; its uids with a score count as scored this many rounds
# (long enough that the EMA needs no correction for its start at 0).
V1_ROUNDS = 10_000


def finite_unit(value: float) -> float:
    """NaN/inf -> 0, everything clipped into [0, 1]."""
    value = float(value)
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


@dataclass
class ScoreState:
    """`services`: the services this validator scores (a miner's weight combines them); columns of
    other services found in a saved state are kept, not counted."""

    services: tuple[str, ...] = ()
    hotkeys: list[str] = field(default_factory=list)
    emas: dict[str, list[float]] = field(default_factory=dict)  # EMA of rewards per service and uid
    counts: dict[str, list[int]] = field(default_factory=dict)  # scored rounds per service and uid
    round: int = 0
    last_weights_block: int = -1
    curve: Curve = field(default=CURVE, compare=False)

    def __post_init__(self) -> None:
        self.services = tuple(self.services)
        for service in self.services:
            self.emas.setdefault(service, [])
        for service in self.emas:
            self.counts.setdefault(service, [])

    def sync(self, hotkeys: list[str]) -> list[int]:
        """Follow the metagraph; a uid whose hotkey changed starts again from nothing.
        Returns the uids that were reset."""
        reset = [uid for uid, old in enumerate(self.hotkeys[: len(hotkeys)]) if old != hotkeys[uid]]
        for table, empty in ((self.emas, 0.0), (self.counts, 0)):
            for column in table.values():
                del column[len(hotkeys) :]
                column.extend([empty] * (len(hotkeys) - len(column)))
                for uid in reset:
                    column[uid] = empty
        self.hotkeys = list(hotkeys)
        return reset

    def update(self, service: str, uid: int, reward: float) -> float:
        """One scored round of `uid` in `service`; the new EMA."""
        column = self.emas[service]
        column[uid] = float(self.curve.update(finite_unit(column[uid]), finite_unit(reward)))
        self.counts[service][uid] += 1
        return column[uid]

    def _matrix(self, table: dict) -> np.ndarray:
        return np.array([table[s] for s in self.services], float).reshape(len(self.services), len(self.hotkeys))

    def estimates(self) -> dict[str, list[float]]:
        """Per scored service and uid: the EMA as an estimate of the mean reward (corrected for its start)."""
        values = self.curve.estimate(self._matrix(self.emas), self._matrix(self.counts))
        return {s: [float(v) for v in row] for s, row in zip(self.services, values)}

    def combined(self) -> list[float]:
        """Per uid: the mean estimated reward over the scored services."""
        if not self.services:
            return [0.0] * len(self.hotkeys)
        estimates = self.estimates()
        return [sum(estimates[s][uid] for s in self.services) / len(self.services) for uid in range(len(self.hotkeys))]

    def weights(self) -> list[float]:
        """The curve's L1-normalised weights; all zeros when nobody earned anything."""
        if not self.services or not self.hotkeys:
            return [0.0] * len(self.hotkeys)
        return [float(w) for w in self.curve.weights(self._matrix(self.emas), self._matrix(self.counts))]

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "round": self.round,
            "last_weights_block": self.last_weights_block,
            "hotkeys": self.hotkeys,
            "emas": self.emas,
            "counts": self.counts,
        }

    def save(self, path: str) -> None:
        atomic_write_json(path, self.to_json())

    @classmethod
    def load(cls, path: str, services: tuple[str, ...], curve: Curve = CURVE) -> ScoreState:
        """The saved state, or a fresh one when there is none (a version-1 state is carried over)."""
        if not os.path.exists(path):
            return cls(services, curve=curve)
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read validator state {path}: {error}") from None
        if not isinstance(data, dict) or data.get("version") not in (1, 2, STATE_VERSION):
            raise ConfigError(f"{path}: not a version-{STATE_VERSION} audionet validator state")
        # Versions 1 and 2 called the EMAs "scores".
        emas = {s: [finite_unit(v) for v in column] for s, column in dict(data.get("emas", data.get("scores"))).items()}
        if data["version"] == 1:
            counts = {s: [V1_ROUNDS if v > 0 else 0 for v in column] for s, column in emas.items()}
        else:
            counts = {s: [max(0, int(v)) for v in column] for s, column in dict(data["counts"]).items()}
        state = cls(
            services,
            hotkeys=list(data["hotkeys"]),
            emas=emas,
            counts=counts,
            round=int(data["round"]),
            last_weights_block=int(data["last_weights_block"]),
            curve=curve,
        )
        state.sync(state.hotkeys)  # pad columns if the file predates a service
        return state


def atomic_write_json(path: str, data) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
