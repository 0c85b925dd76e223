"""A weight copier's dividends under each bond model a subnet owner can switch on (`lib/core/yuma.py`).

Consensus, clipping and trust do not depend on bonds, so a run's epochs replayed with other bonds give every
validator the dividends it would have had: the weights, and a copier's copies, are the same."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

from audionet.lib.core import yuma

# The owner's choices (keyword arguments of `yuma.epoch`): the chain's default bonds; Yuma3 (`Yuma3On`); Yuma3
# with liquid alpha at its defaults; and that with bonds penalty 0 (bonds follow the weights as set, unclipped).
MODELS = {
    "chain default": {},
    "Yuma3": {"yuma3": yuma.Yuma3()},
    "Yuma3 + liquid alpha": {"yuma3": yuma.Yuma3(liquid=True)},
    "Yuma3 + liquid alpha, penalty 0": {"yuma3": yuma.Yuma3(liquid=True), "bonds_penalty": 0.0},
}


def replay(inputs, model: dict) -> Iterator[list[yuma.Epoch]]:
    """Each epoch of `inputs` (a run's `epoch_inputs`), per mechanism, run again with `model`'s bonds."""
    bonds: list = [None] * len(inputs[0]) if inputs else []
    for epoch in inputs:
        found = [
            yuma.epoch(stored.astype(float), stake, bonds[m], fresh, **model)
            for m, (stored, stake, fresh) in enumerate(epoch)
        ]
        bonds = [e.bonds for e in found]
        yield found


def per_stake(dividends: np.ndarray, stake: np.ndarray) -> np.ndarray:
    """Each validator's dividends over its share of the active stake (nan where it had none)."""
    share = yuma.normalise(stake)
    return np.divide(dividends, share, out=np.full(share.shape, np.nan), where=share > 0)


def dividends_per_stake(inputs, model: dict) -> np.ndarray:
    """[epoch, mechanism, validator]: `per_stake`, the epochs `inputs` replayed with `model`'s bonds."""
    return np.array(
        [
            [per_stake(e.dividends, stake) for e, (_, stake, _) in zip(found, epoch)]
            for found, epoch in zip(replay(inputs, model), inputs)
        ]
    )


def window_mean(values: np.ndarray) -> np.ndarray:
    """[validator]: the mean of [epoch, mechanism, validator] per validator, over the epochs it had stake."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a validator without stake in the window (not begun)
        return np.nanmean(values, axis=(0, 1))


def copier_premium(run, window: slice, model: dict) -> float:
    """The best weight copier's mean dividends per stake over `window` minus the honest validators' median."""
    per_stake_now = window_mean(dividends_per_stake(run.epoch_inputs, model)[window])
    honest = [v for v, r in enumerate(run.roles) if r.honest]
    copiers = [v for v, r in enumerate(run.roles) if r.copies]
    return float(np.nanmax(per_stake_now[copiers]) - np.nanmedian(per_stake_now[honest]))
