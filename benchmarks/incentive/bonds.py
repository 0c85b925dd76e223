"""A weight copier's dividends under each bond model a subnet owner can switch on (`lib/core/yuma.py`).

Consensus, clipping and trust do not depend on bonds, so a run's epochs replayed with other bonds give every
validator the dividends it would have had: the weights, and a copier's copies, are the same."""

from __future__ import annotations

import warnings

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


def dividends_per_stake(run, model: dict) -> np.ndarray:
    """[epoch, mechanism, validator]: each validator's dividends over its share of the active stake (nan where
    it had none), the run's epochs replayed with `model`'s bonds."""
    bonds: list = [None] * len(run.mechanisms)
    out = []
    for epoch in run.epoch_inputs:
        row = []
        for m, (stored, stake, fresh) in enumerate(epoch):
            found = yuma.epoch(stored.astype(float), stake, bonds[m], fresh, **model)
            bonds[m] = found.bonds
            share = yuma.normalise(stake)
            row.append(np.divide(found.dividends, share, out=np.full(share.shape, np.nan), where=share > 0))
        out.append(row)
    return np.array(out)


def copier_premium(run, window: slice, model: dict) -> float:
    """The best weight copier's mean dividends per stake over `window` minus the honest validators' median."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a validator without stake in the window (not begun)
        per_stake = np.nanmean(dividends_per_stake(run, model)[window], axis=(0, 1))
    honest = [v for v, r in enumerate(run.roles) if r.honest]
    copiers = [v for v, r in enumerate(run.roles) if r.copies]
    return float(np.nanmax(per_stake[copiers]) - np.nanmedian(per_stake[honest]))
