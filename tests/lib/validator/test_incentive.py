"""The scores-to-weights curve as a function: monotone, gated, floored, and calm about newcomers."""

from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.validator.incentive import CURVE, FLOOR_WIDTH, Curve

MATURE = 10_000  # scored rounds: a uid known as well as the EMA can know it


def weights(curve: Curve, scores, counts=None) -> np.ndarray:
    """Weights for per-service mean rewards [service][uid] as a long-running EMA holds them."""
    scores = np.asarray(scores, float)
    counts = np.full(scores.shape, MATURE) if counts is None else np.asarray(counts, float)
    ema = scores * (1 - (1 - curve.alpha) ** counts)  # what the EMA holds after `counts` rounds of that mean
    return curve.weights(ema, counts)


def test_a_higher_score_never_earns_less():
    rng = np.random.default_rng(0)
    for _ in range(200):
        scores = rng.uniform(0.3, 1.0, size=(3, 12))
        before = weights(CURVE, scores)
        uid, service = rng.integers(12), rng.integers(3)
        raised = scores.copy()
        raised[service, uid] = min(1.0, raised[service, uid] + rng.uniform(0.001, 0.1))
        assert weights(CURVE, raised)[uid] >= before[uid] - 1e-12


def test_identical_scores_get_identical_weights_and_weights_sum_to_one():
    w = weights(CURVE, [[0.8, 0.8, 0.6], [0.7, 0.7, 0.7], [0.9, 0.9, 0.9]])
    assert w[0] == w[1] > 0 and w.sum() == pytest.approx(1.0)


def test_below_the_floor_earns_exactly_nothing():
    curve = replace(CURVE, service_floor=None, floor=0.8)
    best, near, far = 0.8, 0.8 * (curve.floor + 0.05), 0.8 * (curve.floor - 0.01)
    w = weights(curve, [[best, near, far]] * 3)
    assert w[0] > w[1] > 0 and w[2] == 0.0


def test_one_service_at_the_service_floor_closes_the_gate():
    """Perfect in two services, at the service floor of the best in the third: nothing."""
    low = CURVE.service_floor * 0.9
    w = weights(CURVE, [[0.9, 0.9, 0.9], [0.8, 0.8, 0.8 * low], [0.95, 0.95, 0.95]])
    assert w[2] == 0.0 and w[0] == w[1] > 0
    opening = weights(CURVE, [[0.9, 0.9], [0.8, 0.8 * (CURVE.service_floor + FLOOR_WIDTH / 2)], [0.95, 0.95]])
    assert 0 < opening[1] < opening[0]


def test_nobody_earns_before_eligible_and_nothing_is_all_zeros():
    curve = replace(CURVE, eligible_after=5)
    assert weights(curve, [[0.9, 0.8]], counts=[[4, 4]]).tolist() == [0.0, 0.0]
    assert weights(curve, [[0.9, 0.8]], counts=[[5, 4]]).tolist() == [1.0, 0.0]
    assert curve.weights(np.zeros((3, 4)), np.full((3, 4), MATURE)).tolist() == [0.0] * 4
    assert curve.weights(np.zeros((3, 0)), np.zeros((3, 0))).tolist() == []


def test_a_lucky_newcomer_does_not_rescale_everybody_else():
    """A young uid that reads above the best mature one earns what the best earns, no more, and the
    others keep the weights they had relative to each other."""
    mature = [[0.80, 0.78, 0.76]] * 3
    before = weights(CURVE, mature)
    young = CURVE.mature_after - 1
    after = weights(CURVE, [row + [0.95] for row in mature], counts=[[MATURE] * 3 + [young]] * 3)
    assert after[3] == pytest.approx(after[0])
    assert after[:3] / after[:3].sum() == pytest.approx(before)


def test_the_reference_is_the_best_eligible_uid_while_none_is_mature():
    w = weights(CURVE, [[0.9, 0.9 * CURVE.floor]] * 3, counts=[[CURVE.eligible_after] * 2] * 3)
    assert w.tolist() == [1.0, 0.0]


def test_a_service_nobody_scored_in_is_left_out():
    w = weights(CURVE, [[0.9, 0.8], [0.0, 0.0], [0.9, 0.9]])
    assert w[0] > w[1] > 0


def test_the_debiased_estimate_equals_the_mean_of_a_steady_reward():
    ema = np.zeros(1)
    for _ in range(7):
        ema = CURVE.update(ema, np.array([0.6]))
    assert CURVE.estimate(ema, np.array([7.0]))[0] == pytest.approx(0.6)
    assert CURVE.update(np.array([0.5]), np.array([np.nan]))[0] == pytest.approx((1 - CURVE.alpha) * 0.5)
