import asyncio

import pytest

from audionet.lib.errors import WireError
from audionet.lib.limiter import PriorityLimiter


def test_waiters_run_by_priority_and_overflow_is_refused():
    async def scenario():
        limiter, order = PriorityLimiter(concurrency=1, max_waiting=2), []
        gate = asyncio.Event()

        async def job(name, priority):
            async with limiter.slot(priority):
                order.append(name)
                await gate.wait()

        first = asyncio.create_task(job("first", 0))
        await asyncio.sleep(0)
        low, high = asyncio.create_task(job("low", 1)), asyncio.create_task(job("high", 50))
        await asyncio.sleep(0)
        with pytest.raises(WireError) as info:  # no more stake than the last in line: refused itself
            await job("overflow", 1)
        assert info.value.status == 503
        gate.set()
        await asyncio.gather(first, low, high)
        return order, limiter

    order, limiter = asyncio.run(scenario())
    assert order == ["first", "high", "low"]
    assert limiter.busy == 0 and limiter.waiting == 0


def test_cancelled_waiter_does_not_leak_a_slot():
    async def scenario():
        limiter = PriorityLimiter(concurrency=1, max_waiting=4)
        hold = asyncio.Event()

        async def holder():
            async with limiter.slot():
                await hold.wait()

        task = asyncio.create_task(holder())
        await asyncio.sleep(0)
        waiter = asyncio.create_task(holder())
        await asyncio.sleep(0)
        waiter.cancel()
        hold.set()
        await task
        with pytest.raises(asyncio.CancelledError):
            await waiter
        async with limiter.slot():
            return limiter.busy

    assert asyncio.run(scenario()) == 1


def test_a_higher_stake_caller_displaces_the_last_waiter_when_the_line_is_full():
    async def scenario():
        limiter, order, gate = PriorityLimiter(concurrency=1, max_waiting=2), [], asyncio.Event()

        async def job(name, priority):
            try:
                async with limiter.slot(priority):
                    order.append(name)
                    await gate.wait()
            except WireError as error:
                order.append(f"{name}: {error.status}")

        tasks = [asyncio.create_task(job("running", 1))]
        await asyncio.sleep(0)
        tasks += [asyncio.create_task(job(name, 1)) for name in ("low-early", "low-late")]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(job("equal", 1)))  # no more stake than the line: refused itself
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(job("high", 1000)))  # displaces the newest of the lowest
        await asyncio.sleep(0)
        assert limiter.waiting == 2
        gate.set()
        await asyncio.gather(*tasks)
        return order, limiter

    order, limiter = asyncio.run(scenario())
    assert order == ["running", "equal: 503", "low-late: 503", "high", "low-early"]
    assert limiter.busy == 0 and limiter.waiting == 0
