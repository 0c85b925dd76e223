"""From per-service scores to weights: the EMA, eligibility and the curve, with their constants.

One pure, vectorised function of the validator's per-service EMAs and scored-round counts, used by the
validator (`ScoreState.weights`) and simulated by the incentive study (`benchmarks/incentive/main.py`), which
chose the constants of `CURVE` from measured score samples (docs/scoring.md#from-scores-to-weights):

1. Each scored round moves a service's EMA by `alpha` towards the round's reward. The EMA is divided by
   1 - (1 - alpha)^n (n = scored rounds): a newcomer's score is the weighted mean of what it has shown,
   not that mean pulled towards 0.
2. A uid earns nothing before `eligible_after` scored rounds.
3. Per service, its score relative to the reference: the best score among mature uids (a full EMA memory,
   1/alpha scored rounds), or among eligible ones while none is mature. A younger uid counts at most as
   the reference, so one lucky newcomer cannot rescale everybody else.
4. A service answered at or below `service_floor` of the best closes the gate: the uid earns nothing
   however good its other services are (the gate opens over the next FLOOR_WIDTH, so a miner near the
   floor does not flip between full pay and none). A young uid's floor is lower by `floor_slack` times how
   much more uncertain its estimate is than a long record's (standard errors in units of one round's
   noise: 1 after one round, sqrt(alpha / (2 - alpha)) for a long record): a few unlucky rounds do not
   shut out a good miner, a long record is judged strictly.
5. Weight = gate x ((mean relative score - floor) / (1 - floor)) ^ power above the floor, 0 at and below
   it; L1-normalised. All zeros when nobody earned anything (the caller then sets no weights).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

FLOOR_WIDTH = 0.05  # relative score over which a service's gate goes from closed to open


@dataclass(frozen=True)
class Curve:
    alpha: float  # EMA weight of one scored round
    eligible_after: int  # scored rounds before a uid can earn
    floor: float  # mean relative score at and below which a uid earns 0
    power: float  # steepness above the floor
    service_floor: Optional[float] = None  # relative score of one service that closes the gate (None: no gate)
    floor_slack: float = 0.0  # how much lower the gate closes for a uid known from one round only (x ~0.95)
    debias: bool = True  # divide the EMA by 1 - (1 - alpha)^n (False: the EMA as it is, from 0)

    @property
    def mature_after(self) -> int:
        """Scored rounds after which a uid's score is known as well as the EMA can know it."""
        return max(self.eligible_after, math.ceil(1.0 / self.alpha))

    def update(self, ema: np.ndarray, reward: np.ndarray) -> np.ndarray:
        """The EMA after one scored round (non-finite rewards count as 0, rewards clipped to [0, 1])."""
        reward = np.clip(np.nan_to_num(np.asarray(reward, float), nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
        return self.alpha * reward + (1.0 - self.alpha) * np.asarray(ema, float)

    def estimate(self, ema: np.ndarray, count: np.ndarray) -> np.ndarray:
        """The EMA as an estimate of the mean reward (0 before the first scored round)."""
        ema, count = np.asarray(ema, float), np.asarray(count, float)
        if not self.debias:
            return ema
        seen = 1.0 - (1.0 - self.alpha) ** count
        return np.divide(ema, seen, out=np.zeros_like(ema), where=seen > 0)

    def shape(self, relative: np.ndarray) -> np.ndarray:
        above = np.clip((relative - self.floor) / (1.0 - self.floor), 0.0, None)
        return above**self.power

    def standard_error(self, count: np.ndarray) -> np.ndarray:
        """The estimate's standard error in units of one round's noise: sqrt of the sum of the squared
        weights the (debiased) EMA gives its rounds."""
        beta, n = 1.0 - self.alpha, np.maximum(np.asarray(count, float), 1.0)
        with np.errstate(over="ignore"):
            return np.sqrt(self.alpha * (1 - beta ** (2 * n)) / ((2 - self.alpha) * (1 - beta**n) ** 2))

    def floor_factor(self, relative: np.ndarray, rounds: np.ndarray) -> np.ndarray:
        """Per uid: 0 if any service is at or below its floor, 1 from FLOOR_WIDTH above."""
        if self.service_floor is None:
            return np.ones(relative.shape[1])
        young = self.standard_error(rounds) - self.standard_error(np.inf)
        floor = self.service_floor - self.floor_slack * young
        return np.clip((relative - floor) / FLOOR_WIDTH, 0.0, 1.0).prod(axis=0)

    def relative(self, ema: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(relative score [service, uid], scored rounds [uid]: its fewest in any service) from EMAs and
        scored-round counts [service, uid].
        A service in which no known uid scored anything is left out (as if it were not scored)."""
        ema, count = np.atleast_2d(ema), np.atleast_2d(count)
        score = self.estimate(ema, count)
        rounds = count.min(axis=0)
        eligible = rounds >= self.eligible_after
        mature = rounds >= self.mature_after
        known = mature if mature.any() else eligible
        if not known.any():
            return np.zeros((0, score.shape[1])), rounds
        reference = score[:, known].max(axis=1)
        scored = reference > 0
        return np.minimum(score[scored] / reference[scored, None], 1.0), rounds

    def weights(self, ema: np.ndarray, count: np.ndarray) -> np.ndarray:
        """L1-normalised weights per uid; all zeros when nobody earned anything."""
        relative, rounds = self.relative(ema, count)
        if relative.shape[0] == 0:
            return np.zeros(rounds.shape)
        earned = self.floor_factor(relative, rounds) * self.shape(relative.mean(axis=0))
        raw = np.where(rounds >= self.eligible_after, earned, 0.0)
        total = raw.sum()
        return raw / total if total > 0 else np.zeros_like(raw)


# Chosen by `audionet-bench incentive` (benchmarks/results/cpu-x86_64-2core/incentive-offline.md).
CURVE = Curve(alpha=0.005, eligible_after=3, floor=0.0, power=1.0, service_floor=0.85, floor_slack=0.6)
