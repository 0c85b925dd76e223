"""The serving-count scenario: does the reference move with how many uids serve a service?

One validator, one thinly served service (TTS: 20 honest uids at 0.70-1.00 of the best), each uid's record
filled with 400 answers drawn from the measured samples, every 204 s (a GPU validator's pace). Then 230 uids of
the cheap class (espeak) begin to serve it: the pay of a uid at 0.90 relative to the best should not move. And
6 copies of the best model against one: copies should earn no more than in proportion.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from audionet.benchmarks.incentive.population import Samples, cheap_answers

SERVICE, THIN, CHEAP, COPIES, ANSWERS, EVERY_S = "tts", 20, 230, 6, 400, 204.0


def _weights(scorer, answers: list[np.ndarray], serving: np.ndarray, seed: int) -> np.ndarray:
    """One validator's weights for one service after ANSWERS answers of each uid (a bootstrap of its scores,
    drawn by its own generator: a uid answers alike whoever else serves)."""
    one = replace(scorer, services=(SERVICE,))
    state = one.start((1, 1, len(answers)))
    uids = np.flatnonzero(serving)
    drawn = np.array(
        [a[np.random.default_rng([seed, u]).integers(len(a), size=ANSWERS)] for u, a in enumerate(answers)]
    )
    for step in range(ANSWERS):
        one.tick(state, EVERY_S)
        index = (np.zeros_like(uids), np.zeros_like(uids), uids)
        one.observe(state, index, drawn[uids, step], np.zeros(len(uids), bool))
    rows, _, _ = one.publish(state, 0, serving[None, :], np.array([True]))
    return rows[0]


def measure(scorer, samples: Samples, seed: int = 0) -> dict[str, float]:
    """{"moved": |change| of a 0.90 uid's pay over the best's when the cheap uids begin to serve, "copies": 6
    copies' pay over 6 x one copy's}."""
    qualities = np.linspace(0.70, 1.00, THIN)
    honest = [samples.honest(SERVICE, q) for q in qualities]
    cheap = [cheap_answers(samples)[SERVICE]] * CHEAP
    at_090 = int(np.argmin(np.abs(qualities - 0.9)))
    ratios = []
    for serves in (False, True):
        serving = np.r_[np.ones(THIN, bool), np.full(CHEAP, serves)]
        weights = _weights(scorer, honest + cheap, serving, seed)
        ratios.append(weights[at_090] / weights[THIN - 1])
    paid = []
    for copies in (COPIES, 1):
        best = [samples.honest(SERVICE)] * copies
        weights = _weights(scorer, honest + best, np.ones(THIN + copies, bool), seed)
        paid.append(weights[THIN:].sum())
    return {"moved": float(abs(ratios[1] / ratios[0] - 1)), "copies": float(paid[0] / (COPIES * paid[1]))}
