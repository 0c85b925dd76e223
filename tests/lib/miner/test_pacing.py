"""Pacing /v1/health: one rate, and one rate per key (an address, a caller) with a bounded table."""

import asyncio

from audionet.lib.miner.pacing import Pacer, Pacers


def test_the_pacer_serves_a_burst_then_the_rate_and_refuses_what_would_wait_too_long():
    async def scenario():
        pacer = Pacer(rate=20.0, burst=3, max_wait_s=0.21, clock=lambda: 100.0)  # every caller at one instant
        return await asyncio.gather(*(pacer.turn() for _ in range(20)))

    turns = asyncio.run(scenario())
    assert turns.count(True) == 3 + 4 and turns[:7] == [True] * 7  # the burst, then 0.05-0.2 s waits


def test_one_key_over_its_rate_does_not_make_another_wait():
    """Issue 37: 200 addresses pipelining unsigned health made everyone's health wait 5 s and then 429, the
    miner's own signed health included. Paced per address, a flood spends only its own address's turns."""

    async def scenario():
        pacers = Pacers(rate=2.0, burst=2, max_wait_s=0.01, clock=lambda: 100.0)
        flood = await asyncio.gather(*(pacers.turn("127.1.0.1") for _ in range(50)))
        return flood, await pacers.turn("127.0.0.1")

    flood, other = asyncio.run(scenario())
    assert flood.count(True) == 2 and other


def test_the_table_forgets_the_key_heard_from_least_recently():
    async def scenario():
        pacers = Pacers(rate=1.0, burst=1, max_wait_s=0.0, size=2, clock=lambda: 100.0)
        first = [await pacers.turn(key) for key in ("a", "b", "a", "c")]  # "b" is forgotten, "a" kept
        return first, await pacers.turn("a"), await pacers.turn("b"), len(pacers)

    first, a_again, b_again, size = asyncio.run(scenario())
    assert first == [True, True, False, True] and not a_again and b_again and size == 2
