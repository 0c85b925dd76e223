"""What owning the judges nothing floors is worth: the bound the declaration's ceilings give for any weights.

A part with a ceiling is paid by public networks a faint perturbation drives to their top (the MOS predictors,
the speaker encoder, CLAP, Audiobox Aesthetics), capped by judges such a perturbation barely moves
(lib/scoring/declaration.py `Ceiling`). Their weights need not be on this machine to bound what owning them
buys: set every such measure to the middle of its range (an assumed verdict before the attack), then to its top
(an attacker who owns them), with and without the ceilings, and judge the answer's other measures as measured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from audionet.benchmarks.attacks.surrogate import best_possible
from audionet.lib.scoring.declaration import Judging, Range

MIDDLE = 0.5  # the learned judges' verdict on an answer before it is attacked: half of each range
SCORES = ("learned_middle", "owned", "owned_uncapped")  # owned_scores' keys


def capped_ranges(judging: Judging) -> dict[str, Range]:
    """The measures of every part that has a ceiling (the judges an attacker can own), with their ranges."""
    return {name: scale for part in judging.parts if part.ceiling is not None for name, scale in part.measures.items()}


def owned_scores(judging: Judging, measures: Mapping[str, float], gated: bool) -> dict[str, float]:
    """The answer's score with its capped measures at half their range (`learned_middle`), at their top
    (`owned`, the ceilings binding) and at their top without the ceilings (`owned_uncapped`). 0 where a gate
    fired: owning a judge opens no gate."""
    if gated:
        return dict.fromkeys(SCORES, 0.0)
    learned = capped_ranges(judging)
    middle = {name: r.zero + MIDDLE * (r.one - r.zero) for name, r in learned.items()}
    uncapped = dataclasses.replace(judging, parts=tuple(dataclasses.replace(p, ceiling=None) for p in judging.parts))
    return {
        "learned_middle": judging.breakdown({**measures, **middle}).score,
        "owned": best_possible(judging, measures, learned),
        "owned_uncapped": best_possible(uncapped, measures, learned),
    }
