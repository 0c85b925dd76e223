"""A round's draws: reproducible from the seed, each in a worker thread, and a slow lane holds no other."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from audionet.lib.validator.draws import DrawLanes


def _draw(rng: np.random.Generator) -> int:
    return int(rng.integers(1 << 30))


def test_a_seed_gives_the_same_requests_in_the_order_asked():
    async def round_of(seed: int) -> list[int]:
        lanes = DrawLanes(np.random.default_rng(seed), {"tts": _draw, "vc": _draw})
        return await asyncio.gather(*(lanes.draw(s) for s in ["tts", "vc", "tts", "vc", "tts"]))

    first, again, other = asyncio.run(round_of(7)), asyncio.run(round_of(7)), asyncio.run(round_of(8))
    assert first == again
    assert first != other
    assert len(set(first)) == len(first)  # every miner its own prompt, lanes not sharing a stream


def test_a_draw_runs_off_the_loop_and_a_slow_lane_holds_no_other():
    release = threading.Event()
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def slow(rng: np.random.Generator) -> str:
        threads.append(threading.get_ident())
        release.wait(timeout=60)  # released by the test once the fast lane has answered
        return "vc"

    def fast(rng: np.random.Generator) -> str:
        threads.append(threading.get_ident())
        return "tts"

    async def round_() -> tuple[str, str]:
        lanes = DrawLanes(np.random.default_rng(1), {"vc": slow, "tts": fast})
        held = asyncio.ensure_future(lanes.draw("vc"))
        tts = await lanes.draw("tts")  # answers while the vc draw still waits at its gate
        assert not held.done()
        release.set()
        return tts, await held

    assert asyncio.run(round_()) == ("tts", "vc")
    assert loop_thread not in threads and len(threads) == 2
