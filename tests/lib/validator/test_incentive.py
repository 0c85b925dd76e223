"""The record in wall-clock time and the curve per service: monotone, smooth above its floor, a reference no
single uid sets and the count of serving uids does not move, young uids counted by their uncertainty, a record
that starts again when the answers change, failures counted once per run, weights published only on evidence."""

from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.validator.incentive import CURVE, Curve
from audionet.lib.validator.record import Record, estimate

EVERY_S = 204.0  # a uid's answers come this far apart on a GPU validator (15 of 256 uids every 12 s)


def recorded(means, answers: int = 400, noise: float = 0.1, curve: Curve = CURVE, seed: int = 0) -> Record:
    """A record of `answers` noisy answers per uid around `means`, EVERY_S apart."""
    rng = np.random.default_rng(seed)
    means = np.asarray(means, float)
    record = Record.empty(means.shape)
    for _ in range(answers):
        record.decay(EVERY_S, curve.memory)
        record.add(slice(None), np.clip(means + noise * rng.standard_normal(means.shape), 0, 1), curve.memory)
    return record


def joined(*records: Record) -> Record:
    return Record(*(np.concatenate(arrays) for arrays in zip(*(vars(r).values() for r in records))))


def test_a_newcomers_estimate_is_the_mean_of_what_it_showed_and_bad_rewards_count_as_zero():
    record = Record.empty(3)
    for reward in (0.6, 0.8):
        record.decay(EVERY_S, CURVE.memory)
        record.add([0, 1, 2], [reward, float("nan"), float("inf")], CURVE.memory)
    found = estimate(record)
    assert found.value == pytest.approx([0.7, 0.0, 0.0], abs=1e-4) and found.answers.tolist() == [2, 2, 2]


def test_the_record_forgets_in_wall_clock_time():
    record = Record.empty(1)
    record.add(0, 1.0, CURVE.memory)
    record.decay(CURVE.memory.record_s * np.log(2), CURVE.memory)
    assert record.weight[0] == pytest.approx(0.5) and estimate(record).value[0] == pytest.approx(1.0)


def test_identical_records_earn_alike_weights_sum_to_one_and_a_higher_score_never_earns_less():
    means = np.linspace(0.6, 0.9, 40)
    record = recorded(means)
    weights = CURVE.weights(joined(record, record))
    assert weights[:40] == pytest.approx(weights[40:]) and weights.sum() == pytest.approx(1.0)
    before = CURVE.weights(record)
    for uid in range(0, 40, 3):
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


def test_no_single_uid_sets_the_reference_and_the_count_of_serving_uids_does_not_move_it():
    """The reference is the fifth best bound: how far one uid stands above the others changes nobody else's
    weight relative to the rest, and 230 cheap uids that begin to serve a thinly served service change nobody's
    weight."""
    means = np.linspace(0.6, 0.8, 20)
    weights = {}
    for top in (0.81, 0.99):
        means[-1] = top
        weights[top] = CURVE.weights(recorded(means))
    assert weights[0.99][19] > weights[0.81][19] > weights[0.99][:19].max()
    rest = {top: w[:19] / w[:19].sum() for top, w in weights.items()}
    assert rest[0.99] == pytest.approx(rest[0.81], rel=1e-9)
    thin = recorded(np.linspace(0.5, 0.8, 20))
    crowded = joined(thin, recorded([0.3] * 230, seed=1))
    assert CURVE.weights(crowded)[:20] == pytest.approx(CURVE.weights(thin), rel=1e-9)


def test_a_gated_fifth_of_five_is_not_the_reference_and_a_poor_fifth_pays_nothing_below_the_floor():
    """Five eligible uids in a thinly served service: the fifth best is a gated one (bound below 0) or a cheap
    one. The reference stays among the uids near the top, so the best still earn and the cheap ones do not."""
    gated = CURVE.weights(recorded([0.9, 0.85, 0.8, 0.3, 0.0], noise=0.0))
    assert gated.sum() == pytest.approx(1.0) and gated[:3].min() > 0 and gated[3:].max() == 0.0
    cheap = CURVE.weights(recorded([0.86, 0.86, 0.53, 0.53, 0.07], noise=0.05))
    assert cheap[:2].min() > 0 and cheap[2:].max() == 0.0


def test_young_uids_count_by_their_uncertainty_and_nobody_earns_before_eligible():
    record = recorded([0.8] * 8, answers=400)
    young = recorded([0.95, 0.95], answers=CURVE.eligible_after, noise=0.0)
    both = joined(record, young)
    bound, eligible = CURVE.bounds(both)
    found = estimate(both).value
    young_discount, mature_discount = found[8] - bound[8], (found[:8] - bound[:8]).max()
    assert eligible.all() and young_discount > 5 * mature_discount > 0  # three answers count far less than 400
    too_young = recorded([0.95], answers=CURVE.eligible_after - 1)
    assert CURVE.weights(too_young).tolist() == [0.0]
    assert CURVE.weights(Record.empty(4)).tolist() == [0.0] * 4


def test_a_uid_that_does_not_serve_a_service_earns_nothing_in_it():
    record = recorded([0.8, 0.8, 0.8])
    assert CURVE.weights(record, serving=[True, False, True])[1] == 0.0


def test_a_run_of_failures_counts_once_and_pays_nothing_until_the_next_answer():
    """Down for an hour (18 failed queries): one 0 in the record and no pay while down, as if it had declared
    itself not serving; failing one request in four (the hard ones) costs a 0 each time."""
    record = recorded(np.linspace(0.7, 0.9, 20))
    count, before = record.count.copy(), CURVE.weights(record)
    for _ in range(18):
        record.add(19, 0.0, CURVE.memory, failed=True)
    assert record.count[19] == count[19] + 1 and CURVE.weights(record)[19] == 0.0 and CURVE.weights(record)[18] > 0
    record.add(19, 0.9, CURVE.memory)
    assert CURVE.weights(record)[19] == pytest.approx(before[19], rel=0.02)
    selective = Record.empty(1)
    for n in range(400):
        selective.add(0, 0.0 if n % 4 == 0 else 0.9, CURVE.memory, failed=n % 4 == 0)
    assert estimate(selective).value[0] == pytest.approx(0.675, abs=1e-9)  # every fourth answer a 0


def test_a_change_of_model_starts_the_record_again_and_a_steady_one_stays_whole():
    """A long record at 0.8 whose answers turn to 0.64 (0.8 of it) starts again from the change within a few
    dozen answers and is judged on the new answers alone; a turn to a cheat's 0.08 within a handful; steady
    uids keep their estimate (a false start now and then is soon outweighed)."""
    rng = np.random.default_rng(2)
    record = recorded([0.8] * 40, answers=600, noise=0.15)
    for _ in range(60):
        record.decay(EVERY_S, CURVE.memory)
        means = np.r_[[0.64] * 10, [0.08] * 10, [0.8] * 20]
        record.add(slice(None), np.clip(means + 0.15 * rng.standard_normal(40), 0, 1), CURVE.memory)
    found = estimate(record)
    dropped, cheats, steady = slice(0, 10), slice(10, 20), slice(20, 40)
    # the new record holds the answers since the drop statistic began to climb: the change, a few before it
    assert (record.count[dropped] < 660).mean() >= 0.8 and np.median(found.value[dropped]) == pytest.approx(
        0.64, abs=0.04
    )
    assert (record.count[cheats] < 80).all() and found.value[cheats].max() < 0.2
    truth = np.clip(0.8 + 0.15 * rng.standard_normal(10**6), 0, 1).mean()
    assert np.median(np.abs(found.value[steady] - truth)) < 0.01 and CURVE.weights(record)[cheats].max() == 0.0


def test_a_young_record_is_asked_first_until_it_supports_its_weight():
    """A newcomer among long records is unsettled (asked first) from its first answer until its own standard
    error is within `ready_error` of the reference; the long records, a uid that does not serve the service, and
    a service nobody has earned in yet are not."""
    rng = np.random.default_rng(5)
    long = recorded(rng.uniform(0.6, 0.9, 31), noise=0.15)
    record = joined(long, Record.empty(1))
    assert CURVE.unsettled(record).tolist() == [False] * 31 + [True]
    assert not CURVE.unsettled(record, serving=np.arange(32) < 31).any()
    assert not CURVE.unsettled(Record.empty(8)).any()
    answers = 0
    while CURVE.unsettled(record)[31]:
        record.add(31, float(np.clip(0.85 + 0.15 * rng.standard_normal(), 0, 1)), CURVE.memory)
        answers += 1
    found, bound = estimate(record), CURVE.bounds(record)[0]
    reference = CURVE.reference(bound, np.ones(32, bool))
    assert 10 <= answers <= 200 and found.error[31] / reference[0] <= CURVE.ready_error
    assert not CURVE.unsettled(record).any()


def test_weights_are_published_once_the_evidence_supports_them():
    """A fresh record of a subnet (a validator that lost its state) is not ready until the typical serving uid
    is known to within `ready_error` of the reference; a long record is."""
    rng = np.random.default_rng(3)
    means = rng.uniform(0.3, 0.9, 64)
    record, answers = Record.empty(64), 0
    while not CURVE.ready(record):
        record.add(slice(None), np.clip(means + 0.2 * rng.standard_normal(64), 0, 1), CURVE.memory)
        answers += 1
    assert 10 <= answers <= 60 and CURVE.typical_error(record) <= CURVE.ready_error
    assert not CURVE.ready(Record.empty(64)) and np.isinf(CURVE.typical_error(Record.empty(64)))
    half = record.take(slice(None))
    half.count[:40] = 0  # most uids not yet known: not ready however well the rest are
    assert not CURVE.ready(half)
    assert CURVE.ready(recorded(means, noise=0.2), serving=np.arange(64) < 32)
