"""The validator's memory: an EMA of rewards per uid and service.

Saved atomically (temp file, fsync, rename, fsync dir) after every round so a
crash at any point leaves either the old or the new state on disk, and a
restart continues from exactly the saved floats (JSON keeps float repr).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field

from audionet.lib.errors import ConfigError

STATE_VERSION = 1


def finite_unit(value: float) -> float:
    """NaN/inf -> 0, everything clipped into [0, 1]."""
    value = float(value)
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


@dataclass
class ScoreState:
    """`services`: the services this validator scores (a miner's weight is their mean); columns of
    other services found in a saved state are kept, not counted."""

    services: tuple[str, ...] = ()
    hotkeys: list[str] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    round: int = 0
    last_weights_block: int = -1

    def __post_init__(self) -> None:
        self.services = tuple(self.services)
        for service in self.services:
            self.scores.setdefault(service, [])

    def sync(self, hotkeys: list[str]) -> list[int]:
        """Follow the metagraph; a uid whose hotkey changed starts again from 0.
        Returns the uids that were reset."""
        reset = [uid for uid, old in enumerate(self.hotkeys[: len(hotkeys)]) if old != hotkeys[uid]]
        for service in self.scores:
            column = self.scores[service]
            del column[len(hotkeys) :]
            column.extend([0.0] * (len(hotkeys) - len(column)))
            for uid in reset:
                column[uid] = 0.0
        self.hotkeys = list(hotkeys)
        return reset

    def update(self, service: str, uid: int, reward: float, alpha: float) -> float:
        column = self.scores[service]
        column[uid] = alpha * finite_unit(reward) + (1.0 - alpha) * finite_unit(column[uid])
        return column[uid]

    def combined(self, uid: int) -> float:
        if not self.services:
            return 0.0
        return sum(self.scores[s][uid] for s in self.services) / len(self.services)

    def weights(self) -> list[float]:
        """L1-normalised combined scores; all zeros when nobody earned anything."""
        raw = [finite_unit(self.combined(uid)) for uid in range(len(self.hotkeys))]
        total = sum(raw)
        return [r / total for r in raw] if total > 0 else [0.0] * len(raw)

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "round": self.round,
            "last_weights_block": self.last_weights_block,
            "hotkeys": self.hotkeys,
            "scores": self.scores,
        }

    def save(self, path: str) -> None:
        atomic_write_json(path, self.to_json())

    @classmethod
    def load(cls, path: str, services: tuple[str, ...]) -> ScoreState:
        """The saved state, or a fresh one when there is none."""
        if not os.path.exists(path):
            return cls(services)
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError) as error:
            raise ConfigError(f"cannot read validator state {path}: {error}") from None
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            raise ConfigError(f"{path}: not a version-{STATE_VERSION} audionet validator state")
        scores = {s: [finite_unit(v) for v in column] for s, column in dict(data["scores"]).items()}
        state = cls(
            services,
            hotkeys=list(data["hotkeys"]),
            scores=scores,
            round=int(data["round"]),
            last_weights_block=int(data["last_weights_block"]),
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
