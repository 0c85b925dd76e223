"""Which miners a round asks: all of them before any twice, in an unpredictable order, as many as the budget
allows at the measured cost per miner."""

import math

import numpy as np

from audionet.lib.validator.coverage import FIRST, Coverage


def test_every_miner_is_asked_once_before_any_is_asked_again_in_a_new_order_each_pass():
    coverage = Coverage(np.random.default_rng(1))
    uids = list(range(10))
    rounds = [coverage.take(uids, 4) for _ in range(5)]  # 20 asks: two full passes over 10 miners
    asked = [uid for chosen in rounds for uid in chosen]
    assert all(len(set(chosen)) == len(chosen) == 4 for chosen in rounds)
    assert sorted(asked[:10]) == uids and sorted(asked[10:]) == uids
    assert asked[:10] != asked[10:20] and coverage.passes == 2
    other = Coverage(np.random.default_rng(2))
    assert [other.take(uids, 4) for _ in range(2)] != rounds[:2]  # another generator, another order


def test_doubted_miners_are_asked_first_in_up_to_half_a_round_and_the_pass_goes_on():
    coverage = Coverage(np.random.default_rng(3))
    uids = list(range(12))
    first = coverage.take(uids, 4, doubted=[7, 8, 9, 99])  # 99 left the subnet
    assert len(first) == len(set(first)) == 4 and len(set(first) & {7, 8, 9}) >= 2 and 99 not in first
    passed = first + [uid for _ in range(3) for uid in coverage.take(uids, 4)]
    assert set(uids) <= set(passed)  # the pass still reaches every miner
    assert all(5 in coverage.take(uids, 2, doubted=[5]) for _ in range(5))  # asked every round while doubted


def test_miners_that_leave_are_dropped_and_newcomers_join_the_next_pass():
    coverage = Coverage(np.random.default_rng(0))
    first = coverage.take([1, 2, 3, 4], 2)
    left = [uid for uid in (1, 2, 3, 4) if uid not in first]
    rest = coverage.take([*left[:1], 9], 2)  # left[1] deregistered, 9 registered
    assert left[1] not in rest and left[0] in rest and len(rest) == 2 and coverage.passes == 2
    assert sorted(coverage.take([1, 2], 5)) == [1, 2]  # never more than there are, never one twice


def test_the_count_follows_the_budget_at_the_measured_cost():
    coverage = Coverage(np.random.default_rng(0))
    assert coverage.count(256, 12.0, 256) == FIRST  # nothing measured yet
    assert coverage.count(256, math.inf, 200) == 200  # no budget: the cap
    report = coverage.scored(list(range(16)), now=100.0, judging_s=32.0)  # 2 s per miner
    assert coverage.count(256, 12.0, 256) == 6 and coverage.count(3, 12.0, 256) == 3
    assert coverage.count(256, 1.0, 256) == 1  # a round asks at least one miner
    assert report["miners"] == 16 and report["since_last_s"] == {"first_time": 16, "median": None, "max": None}
    again = coverage.scored([3, 20], now=160.0, judging_s=2.0)
    assert again["since_last_s"] == {"first_time": 1, "median": 60.0, "max": 60.0}
    assert 1.0 < coverage.per_miner_s < 2.0  # a running average: one fast round moves it only part way
