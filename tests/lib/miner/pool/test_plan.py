"""The earliest-finish planner on its own: a slow device gets work only once the fast one is booked."""

from audionet.lib.miner.pool.plan import MIN_SIZE, Slots, plan

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
