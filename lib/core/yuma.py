"""Yuma consensus as subtensor's epoch computes it, for one mechanism, in numpy.

Read from opentensor/subtensor at commit 14bc6f9f964b9cc362e9635dd110a487fa5d15a0 (2026-06-30):
`pallets/subtensor/src/epoch/run_epoch.rs` (`epoch_mechanism`), `epoch/math.rs` (`weighted_median`,
`col_clip_sparse`, `mat_ema_sparse`, `interpolate_sparse`) and `subnets/mechanism.rs` (`split_emissions`,
`epoch_with_mechanisms`); written anew, in float64 where the chain uses I32F32 fixed point. The chain's
defaults: kappa 32767/65535, bonds moving average 900 000 (a bond EMA weight of 0.1), bonds penalty 65535
(bonds follow the clipped weights), Yuma3 and liquid alpha off (the original bond EMA below). `Yuma3` is the
other bond model a subnet owner can switch on (`Yuma3On`, and with it `LiquidAlphaOn`), read at commit
03f92770 (`compute_bonds`, `compute_liquid_alpha_values`, `alpha_sigmoid`, `math.rs` `mat_ema_alpha`).

One epoch of one mechanism:
1. Each validator's stored weights (u16, max-upscaled) are normalised per row.
2. Consensus per miner: the stake-weighted median at kappa, i.e. the largest weight that validators holding at
   least kappa of the active stake give at least.
3. Weights are clipped to the consensus. A validator's trust is the sum of its clipped weights; a miner's
   rank is the stake-weighted sum of its clipped weights, and its incentive the ranks normalised.
4. Bonds: the previous epoch's bonds (columns of miners registered since then start again), normalised per
   miner; plus 0.1 x the clipped weights times stake, normalised per miner; normalised per miner again.
   A validator's dividends are its bonds times the miners' incentive, normalised.
   With `Yuma3`: each validator's bond to a miner is its own EMA of its clipped weight, capped at 1 (per cell
   rate alpha: the bonds moving average's, or with liquid alpha a sigmoid of how far the weight is above the
   consensus, or the bond above the weight, between alpha_low and alpha_high); its dividends are its stake
   times its share of each miner's bonds times the miner's incentive, normalised.
5. The mechanism's emission goes half to miners (incentive) and half to validators (dividends); with no
   weights at all, validators are paid by stake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np

U16_MAX = 65_535
KAPPA = 32_767 / U16_MAX  # the chain's default: 0.5 as a u16 proportion
BONDS_ALPHA = 1.0 - 900_000 / 1_000_000  # 1 - bonds_moving_average / 1e6
BONDS_PENALTY = 1.0  # 65535 / 65535: bonds are built from the clipped weights


@dataclass(frozen=True)
class Epoch:
    consensus: np.ndarray  # [uid]
    incentive: np.ndarray  # [uid], sums to 1 (or 0)
    validator_trust: np.ndarray  # [validator]
    dividends: np.ndarray  # [validator], sums to 1 (or 0)
    bonds: np.ndarray  # [validator, uid] as stored: column max-upscaled u16

    @property
    def miner_emission(self) -> np.ndarray:
        """Each uid's share of the mechanism's emission as a miner."""
        total = self.incentive.sum() + self.dividends.sum()
        return self.incentive / total if total > 0 else np.zeros_like(self.incentive)

    @property
    def validator_emission(self) -> np.ndarray:
        total = self.incentive.sum() + self.dividends.sum()
        return self.dividends / total if total > 0 else self.dividends


@dataclass(frozen=True)
class Yuma3:
    """The Yuma3 bonds (`Yuma3On`); `liquid`: liquid alpha on (`LiquidAlphaOn`), at the chain's defaults."""

    liquid: bool = False
    alpha_low: float = 45_875 / U16_MAX  # the chain's default alpha values (0.7, 0.9) as u16
    alpha_high: float = 58_982 / U16_MAX
    steepness: float = 1_000.0  # AlphaSigmoidSteepness (i16)

    def alphas(self, for_bonds: np.ndarray, bonds: np.ndarray, consensus: np.ndarray) -> np.ndarray:
        """Each cell's EMA rate: `alpha_sigmoid` where liquid alpha is on (and the consensus is not all 0)."""
        if not self.liquid or not consensus.any():
            return np.full(for_bonds.shape, BONDS_ALPHA)
        buy = np.clip(for_bonds - consensus, 0.0, 1.0)
        sell = np.clip(bonds - for_bonds, 0.0, 1.0)
        diff = np.where(for_bonds >= bonds, buy, sell)
        sigmoid = 1.0 / (1.0 + np.exp(self.steepness / -100.0 * (diff - 0.5)))
        return np.clip(self.alpha_low + sigmoid * (self.alpha_high - self.alpha_low), self.alpha_low, self.alpha_high)

    def epoch(self, for_bonds, stake, incentive, consensus, bonds, fresh) -> tuple[np.ndarray, np.ndarray]:
        """(dividends, bonds as stored: u16 proportions)."""
        old = np.zeros_like(for_bonds) if bonds is None else np.asarray(bonds, float) / U16_MAX
        if fresh is not None:
            old[:, np.asarray(fresh, bool)] = 0.0
        alpha = self.alphas(for_bonds, old, consensus)
        ema = np.minimum((1 - alpha) * old + alpha * for_bonds, 1.0)
        dividends = normalise((normalise(ema, axis=0) * incentive).sum(axis=1) * stake)
        return dividends, np.rint(ema * U16_MAX)


def quantize(weights: np.ndarray) -> np.ndarray:
    """What set_weights stores: each row max-upscaled to u16 and rounded (bittensor's `normalize`)."""
    weights = np.atleast_2d(np.asarray(weights, float))
    top = weights.max(axis=1, keepdims=True)
    return np.rint(np.divide(weights, top, out=np.zeros_like(weights), where=top > 0) * U16_MAX)


def normalise(x: np.ndarray, axis: Optional[int] = None) -> np.ndarray:
    """Divided by its sum (per row or column); zero sums stay zero."""
    total = x.sum(axis=axis, keepdims=axis is not None)
    return np.divide(x, total, out=np.zeros_like(x, dtype=float), where=total > 0)


def weighted_median(weights: np.ndarray, stake: np.ndarray, kappa: float = KAPPA) -> np.ndarray:
    """Per column: the largest weight that validators holding at least `kappa` of the stake give at least
    (0 for every column where there is no validator)."""
    if weights.shape[0] == 0 or weights.shape[1] == 0:
        return np.zeros(weights.shape[1])
    order = np.argsort(-weights, axis=0, kind="stable")
    ranked = np.take_along_axis(weights, order, axis=0)
    held = np.cumsum(stake[order], axis=0)  # stake giving at least this row's weight
    first = np.argmax(held >= kappa, axis=0)
    found = held[-1] >= kappa
    return np.where(found, ranked[first, np.arange(weights.shape[1])], 0.0)


def epoch(
    weights: np.ndarray,
    stake: Sequence[float],
    bonds: Optional[np.ndarray] = None,
    fresh: Optional[np.ndarray] = None,
    kappa: float = KAPPA,
    yuma3: Optional[Yuma3] = None,
    bonds_penalty: float = BONDS_PENALTY,
) -> Epoch:
    """One epoch. `weights` [validator, uid] as stored (any positive scale per row); `stake` the validators'
    active stake (0 for one without a permit or inactive); `bonds` the previous epoch's `Epoch.bonds` (None:
    none yet); `fresh` [uid] True for uids registered since the previous epoch; `yuma3`: the Yuma3 bonds
    instead of the original ones (`bonds` then as that model stores them); `bonds_penalty` (`BondsPenalty` /
    65535): how far bonds follow the clipped weights rather than the weights as set."""
    weights = np.atleast_2d(np.asarray(weights, float))
    stake = normalise(np.asarray(stake, float))
    w = normalise(weights, axis=1)
    consensus = weighted_median(w, stake, kappa)
    clipped = np.minimum(w, consensus)
    trust = clipped.sum(axis=1)
    incentive = normalise(stake @ clipped)
    for_bonds = w + bonds_penalty * (clipped - w)
    if yuma3 is not None:
        dividends, stored = yuma3.epoch(for_bonds, stake, incentive, consensus, bonds, fresh)
        if incentive.sum() + dividends.sum() == 0:
            dividends = stake
        return Epoch(consensus, incentive, trust, dividends, stored)
    old = np.zeros_like(w) if bonds is None else np.asarray(bonds, float).copy()
    if fresh is not None:
        old[:, np.asarray(fresh, bool)] = 0.0
    delta = normalise(for_bonds * stake[:, None], axis=0)
    ema = normalise(BONDS_ALPHA * delta + (1 - BONDS_ALPHA) * normalise(old, axis=0), axis=0)
    dividends = normalise((ema * incentive).sum(axis=1))
    if incentive.sum() + dividends.sum() == 0:
        dividends = stake  # no weights: validators are paid by stake
    top = ema.max(axis=0, keepdims=True, initial=0.0)
    stored = np.rint(np.divide(ema, top, out=np.zeros_like(ema), where=top > 0) * U16_MAX)
    return Epoch(consensus, incentive, trust, dividends, stored)


def split_shares(split: Sequence[int], count: int) -> np.ndarray:
    """Each mechanism's share of the subnet's emission from the chain's MechanismEmissionSplit (u16 values
    summing to 65535; empty: an even division), padded with zeros to `count` mechanisms."""
    if count <= 0:
        return np.zeros(0)
    if not split:
        return np.full(count, 1.0 / count)
    shares = np.zeros(count)
    values = np.asarray(split[:count], float) / U16_MAX
    shares[: len(values)] = values
    shares[0] += 1.0 - shares.sum()  # the chain credits rounding to mechanism 0
    return shares
