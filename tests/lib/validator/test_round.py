"""Answers judged as they arrive: the answers in while the slowest miner is still out are judged before it
answers, and its answer on its own afterwards."""

import asyncio

import pytest

from audionet.lib.validator.round import score_as_answered


class Recorder:
    """A scorer that notes each batch it is given, and lets the slow miner answer after the first batch."""

    def __init__(self, loop, release: asyncio.Event):
        self.loop, self.release, self.batches = loop, release, []

    def take(self, answers):
        self.batches.append(sorted(answers))
        self.loop.call_soon_threadsafe(self.release.set)

    def finish(self):
        return [answer for batch in self.batches for answer in batch]


def test_the_slowest_miner_holds_only_its_own_answer():
    async def round_():
        release = asyncio.Event()
        scorer = Recorder(asyncio.get_running_loop(), release)

        async def fast(name):
            return name

        async def slow():
            await release.wait()  # answers only once the others were judged
            return "slow"

        scored, network_s, _ = await score_as_answered([fast("a"), slow(), fast("b"), fast("c")], scorer)
        return scorer.batches, scored, network_s

    batches, scored, network_s = asyncio.run(round_())
    assert batches[-1] == ["slow"] and sorted(a for batch in batches[:-1] for a in batch) == ["a", "b", "c"]
    assert sorted(scored) == ["a", "b", "c", "slow"] and network_s > 0


def test_a_query_that_raises_fails_the_round_instead_of_hanging_it():
    class Scorer:
        def take(self, answers):
            pass

    async def broken():
        raise RuntimeError("signing failed")

    async def never():
        await asyncio.Event().wait()

    async def round_():
        return await score_as_answered([broken(), never()], Scorer())

    with pytest.raises(RuntimeError, match="signing failed"):
        asyncio.run(asyncio.wait_for(round_(), 30))  # a hang would end as TimeoutError, not this
