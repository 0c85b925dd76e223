"""The attack study's attacker without a gradient (benchmarks/attacks/pgd.py random_search): it sends sign
noise at the full bound on the 16-bit grid and keeps the answer the Judge it is given scored highest."""

import numpy as np

from audionet.benchmarks.attacks import pgd
from audionet.lib.core.audio import PCM16_SCALE


def test_random_search_keeps_the_best_draw_within_the_bound():
    clean = pgd.on_grid(0.1 * np.sin(np.linspace(0, 200, 4000)).astype(np.float32))
    seen = []

    def check(samples):  # a Judge that pays for one sample's value: every draw scores differently
        seen.append(samples)
        return float(samples[17])

    outcome = pgd.random_search(clean, 0.003, 12, check, clean_score=float(clean[17]), seed=3)
    assert len(seen) == 12 and outcome.steps_run == 12
    assert outcome.score == max(float(s[17]) for s in seen) > float(clean[17])
    assert np.array_equal(outcome.samples, max(seen, key=lambda s: float(s[17])))
    assert np.abs(outcome.samples - clean).max() <= 0.003 + 1 / PCM16_SCALE
    assert np.array_equal(outcome.samples * PCM16_SCALE, np.round(outcome.samples * PCM16_SCALE))


def test_random_search_sends_the_clean_answer_when_no_draw_beats_it():
    clean = pgd.on_grid(np.zeros(1000, np.float32))
    outcome = pgd.random_search(clean, 0.001, 5, lambda samples: 0.0, clean_score=0.5)
    assert outcome.score == 0.5 and np.array_equal(outcome.samples, clean)
    assert [score for _, _, score in outcome.trace] == [0.0] * 5
