"""Which miners a round asks: every miner before any is asked again, in an order no miner can predict, and as
many as the round's time budget allows.

The budget is the round interval (or `--neuron.round_budget`): a round should be judged by the time the next
one is due. The validator measures the seconds it spends judging per miner (gates, duplicates, evaluators: a
running average over rounds; waiting for miners overlaps with judging and is not counted) and asks as many
miners as fit, at most `cap`; before anything is measured it asks `FIRST`.
Each pass over the subnet is a fresh random permutation (the validator's own generator: unseeded on a real
network), so a miner cannot tell when its turn comes, and no miner is asked twice before all were asked once,
except the ones whose answers may have changed (`record.Record.doubtful`): up to half a round asks those first,
so a change is told from noise sooner (a CPU validator otherwise hears from each miner every 13 minutes).
The queue, the passes, the cost per miner and when each miner was last scored are saved with the validator's state
(`as_json`, `from_json`): a restarted validator finishes the pass it was in.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Optional

import numpy as np

from audionet.lib.core.errors import ConfigError

FIRST = 16  # miners asked while the cost per miner is unmeasured
ALPHA = 0.3  # weight of the newest round in the running average of seconds per miner


class Coverage:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.queue: list[int] = []  # uids of this pass not asked yet, next last
        self.passes = 0  # passes over the subnet begun
        self.per_miner_s: Optional[float] = None
        self.last_scored: dict[int, float] = {}  # uid -> wall-clock time of its last scored round
        self.available = 0  # miners there were to ask at the last `take`

    def as_json(self) -> dict:
        return {
            "queue": list(self.queue),
            "passes": self.passes,
            "per_miner_s": self.per_miner_s,
            "last_scored": {str(uid): at for uid, at in self.last_scored.items()},
        }

    @classmethod
    def from_json(cls, data: Optional[dict], rng: np.random.Generator) -> Coverage:
        """The coverage `as_json` saved; a fresh one for None (nothing saved: a new validator, a version-4 state)."""
        coverage = cls(rng)
        if data is None:
            return coverage
        try:
            coverage.queue = [int(uid) for uid in data["queue"]]
            coverage.passes = int(data["passes"])
            per_miner = data["per_miner_s"]
            coverage.per_miner_s = None if per_miner is None else float(per_miner)
            coverage.last_scored = {int(uid): float(at) for uid, at in dict(data["last_scored"]).items()}
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(
                f"cannot read the coverage saved in the validator state ({type(error).__name__}: {error})"
            ) from None
        return coverage

    def count(self, available: int, budget_s: float, cap: int) -> int:
        """Miners to ask this round: as many as the budget allows at the measured cost, within [1, cap] (an
        infinite budget: `cap`, from the first round on)."""
        if budget_s == float("inf"):
            fits = cap
        elif self.per_miner_s is None:
            fits = FIRST
        else:
            fits = int(budget_s / max(self.per_miner_s, 1e-6))
        return max(1, min(fits, cap, available))

    def take(self, uids: Sequence[int], count: int, doubted: Sequence[int] = ()) -> list[int]:
        """`count` of `uids` (the miners there are now): up to half of them `doubted` ones (in a random order),
        then the rest of this pass, then a new pass in a new random order (never a uid twice in one round)."""
        present = set(uids)
        self.available = len(present)
        self.queue = [uid for uid in self.queue if uid in present]
        doubted = sorted(set(doubted) & present)
        chosen: list[int] = [doubted[i] for i in self.rng.permutation(len(doubted))][: count // 2]
        deferred: list[int] = []  # next in a new pass but asked already this round: first in line next round
        while len(chosen) < min(count, len(present)):
            if not self.queue:
                fresh = sorted(present)
                self.queue = [fresh[i] for i in self.rng.permutation(len(fresh))]
                self.passes += 1
            uid = self.queue.pop()
            (deferred if uid in chosen else chosen).append(uid)
        self.queue.extend(reversed(deferred))
        return chosen

    def scored(self, uids: Sequence[int], now: float, judging_s: float) -> dict:
        """Record a round that asked `uids` and spent `judging_s` judging them; what it covered, for the round's log: miners,
        the pass, and the seconds since each of them was last scored (by this validator since it started)."""
        since = [now - self.last_scored[uid] for uid in uids if uid in self.last_scored]
        for uid in uids:
            self.last_scored[uid] = now
        if uids:
            sample, last = judging_s / len(uids), self.per_miner_s
            self.per_miner_s = sample if last is None else last + ALPHA * (sample - last)
        return {
            "miners": len(uids),
            "of": self.available,
            "pass": self.passes,
            "per_miner_s": self.per_miner_s,
            "since_last_s": {
                "first_time": len(uids) - len(since),
                "median": statistics.median(since) if since else None,
                "max": max(since, default=None),
            },
        }
