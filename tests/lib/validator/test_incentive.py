"""The record in wall-clock time and the curve per service: monotone, smooth above its floor, a reference no
single uid sets, young uids counted by their uncertainty, a change in recent answers shown within the recent
memory."""

from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.validator.incentive import CURVE, HOUR, Curve, Record, estimate

EVERY_S = 192.0  # a uid's answers come this far apart at the validator's defaults (16 of 256 uids every 12 s)


def recorded(means, answers: int = 400, noise: float = 0.1, curve: Curve = CURVE, seed: int = 0) -> Record:
    """A record of `answers` noisy answers per uid around `means`, EVERY_S apart."""
    rng = np.random.default_rng(seed)
    means = np.asarray(means, float)
    record = Record.empty(means.shape)
    for _ in range(answers):
        record.decay(EVERY_S, curve.memory)
        record.add(slice(None), np.clip(means + noise * rng.standard_normal(means.shape), 0, 1))
    return record


def test_a_newcomers_estimate_is_the_mean_of_what_it_showed_and_bad_rewards_count_as_zero():
    record = Record.empty(3)
    for reward in (0.6, 0.8):
        record.decay(EVERY_S, CURVE.memory)
        record.add([0, 1, 2], [reward, float("nan"), float("inf")])
    found = estimate(record, CURVE.memory)
    assert found.value == pytest.approx([0.7, 0.0, 0.0], abs=1e-4) and found.answers.tolist() == [2, 2, 2]


def test_the_record_forgets_in_wall_clock_time():
    record = Record.empty(1)
    record.add(0, 1.0)
    record.decay(CURVE.memory.record_s * np.log(2), CURVE.memory)
    assert record.weight[0] == pytest.approx(0.5) and estimate(record, CURVE.memory).value[0] == pytest.approx(1.0)


def test_identical_records_earn_alike_weights_sum_to_one_and_a_higher_score_never_earns_less():
    means = np.linspace(0.6, 0.9, 40)
    record = recorded(means)
    doubled = Record(*(np.concatenate([a, a]) for a in vars(record).values()))
    weights = CURVE.weights(doubled)
    assert weights[:40] == pytest.approx(weights[40:]) and weights.sum() == pytest.approx(1.0)
    before = CURVE.weights(record)
    for uid in range(40):
        raised = means.copy()
        raised[uid] += 0.02  # every answer of this uid 0.02 better, the same noise
        assert CURVE.weights(recorded(raised))[uid] >= before[uid] - 1e-12


def test_below_the_floor_nothing_and_above_it_no_cliff():
    """Pay rises from 0 at the floor in proportion to the distance above it: between the floor and the best,
    weight / best rises by at most 0.01 / (1 - floor) per 0.01 of relative quality."""
    curve = replace(CURVE, confidence_z=0.0)
    quality = np.arange(0.70, 1.0001, 0.01)
    record = recorded(np.concatenate([0.8 * quality, [0.8] * 6]), noise=0.0)  # six at the best set the reference
    weights = curve.weights(record)[: len(quality)]
    relative = weights / weights[-1]
    assert relative[quality <= curve.floor + 1e-9].max() == 0.0
    assert np.diff(relative).max() <= 0.01 / (1 - curve.floor) + 1e-6 < 0.10


def test_no_single_uid_sets_the_reference():
    """On a subnet of 256 uids the reference is about the fifth best: how far one uid stands above the others
    changes nobody else's weight relative to the rest; it earns more than the best of them."""
    means = np.linspace(0.3, 0.8, 256)
    weights = {}
    for top in (0.81, 0.99):
        means[-1] = top
        weights[top] = CURVE.weights(recorded(means))
    assert weights[0.99][255] > weights[0.81][255] > weights[0.99][:255].max()
    rest = {top: w[:255] / w[:255].sum() for top, w in weights.items()}
    assert rest[0.99] == pytest.approx(rest[0.81], rel=1e-9)


def test_young_uids_count_by_their_uncertainty_and_nobody_earns_before_eligible():
    record = recorded([0.8] * 8, answers=400)
    young = recorded([0.95, 0.95], answers=CURVE.eligible_after, noise=0.0)
    both = Record(*(np.concatenate([a, b]) for a, b in zip(vars(record).values(), vars(young).values())))
    bound, eligible = CURVE.bounds(both)
    found = estimate(both, CURVE.memory).value
    young_discount, mature_discount = found[8] - bound[8], (found[:8] - bound[:8]).max()
    assert eligible.all() and young_discount > 5 * mature_discount > 0  # three answers count far less than 400
    too_young = recorded([0.95], answers=CURVE.eligible_after - 1)
    assert CURVE.weights(too_young).tolist() == [0.0]
    assert CURVE.weights(Record.empty(4)).tolist() == [0.0] * 4


def test_a_uid_that_does_not_serve_a_service_earns_nothing_in_it():
    record = recorded([0.8, 0.8, 0.8])
    assert CURVE.weights(record, serving=[True, False, True])[1] == 0.0


def test_recent_answers_move_the_estimate_only_beyond_their_noise():
    """A long record at 0.8 whose answers turn to 0 falls below the floor within the recent memory; answers
    that stay within their noise leave the estimate on the record."""
    memory, rng = CURVE.memory, np.random.default_rng(1)
    record = recorded([0.8] * 3, noise=0.15)
    steady = estimate(record, memory).value
    hours = 0.0
    while estimate(record, memory).value[0] > CURVE.floor * steady[1]:
        record.decay(EVERY_S, memory)
        record.add([0, 1, 2], [0.0, 0.8 + 0.15 * rng.standard_normal(), 0.8])
        hours += EVERY_S / HOUR
    assert hours <= memory.recent_s / HOUR * 2
    found = estimate(record, memory).value
    plain = record.total / record.weight
    assert found[1] == pytest.approx(plain[1]) and found[2] == pytest.approx(plain[2])
