"""The earliest-finish planner on its own: a slow device gets work only once the fast one is booked."""

import pytest

from audionet.lib.core.dispatch import ALPHA, CLIP, MIN_SIZE, Slots, Speed, estimate, plan

FAST, SLOW = Slots((0.0,), 1.0), Slots((0.0,), 3.0)


def finishes(replicas, sizes):
    return [
        (index, start, start + size * replicas[index].seconds_per_audio_s)
        for (index, start), size in zip(plan(replicas, sizes), sizes)
    ]


def test_a_small_burst_stays_on_the_fast_device():
    assert [index for index, _ in plan([FAST, SLOW], [1.0, 1.0])] == [0, 0]
    assert plan([FAST, SLOW], [1.0, 1.0]) == [(0, 0.0), (0, 1.0)]


def test_a_large_burst_spills_onto_the_slow_device_only_where_it_finishes_first():
    sizes = [1.0] * 8
    out = finishes([FAST, SLOW], sizes)
    # fast: 1, 2, 3 (a tie with the slow one's 3 goes to the faster), then the slow one takes the 4th
    assert [index for index, _, _ in out] == [0, 0, 0, 1, 0, 0, 0, 1]
    assert max(end for _, _, end in out) == 6.0  # fast alone: 8.0
    assert all(end <= 8.0 for _, _, end in out)


def test_busy_slots_start_later_and_free_slots_start_now():
    busy_fast = Slots((0.5,), 1.0)
    assert plan([busy_fast, SLOW], [1.0]) == [(0, 0.5)]  # waiting 0.5 s for the fast one beats 3 s on the slow
    assert plan([busy_fast, SLOW], [1.0, 1.0, 1.0])[2] == (1, 0.0)


def test_parallel_slots_and_sizes():
    two_slots = Slots((0.0, 0.0), 1.0)
    assert plan([two_slots], [1.0, 1.0, 1.0]) == [(0, 0.0), (0, 0.0), (0, 1.0)]
    assert plan([Slots((0.0,), 2.0)], [0.0, 0.0]) == [(0, 0.0), (0, 2.0 * MIN_SIZE)]  # nothing is free of cost
    # a long request goes where it ends first, a short one can still fit on the slow device
    assert plan([Slots((5.0,), 1.0), SLOW], [1.0])[0][0] == 1


def test_a_speed_is_its_own_measurements_and_an_unmeasured_one_is_scaled_from_its_warmup():
    fast, slow, fresh = Speed(), Speed(), Speed()
    fast.prior, slow.prior, fresh.prior = 0.1, 0.3, 0.2
    fast.add(elapsed=2.0, audio_seconds=4.0)  # 0.5 s per audio second: 5x its warm-up
    assert estimate(fast, [fast, slow]) == 0.5
    assert estimate(slow, [fast, slow]) == pytest.approx(1.5)  # its prior scaled like the measured one
    fast.add(elapsed=40.0, audio_seconds=4.0)  # a 20x outlier moves the average by at most CLIP
    assert fast.value == pytest.approx(0.5 + ALPHA * (0.5 * CLIP - 0.5))
    assert estimate(Speed(), [fresh]) == 1.0  # nothing known: tried first, then measured
