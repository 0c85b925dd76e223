"""The miner's one scheduler (`ServiceDispatcher`): its stake-ordered line and device dispatch, with requests that
wait at a gate (espeak-ng behind it, `tests/gated.py`) so the test, not a timer, decides when work ends."""

import asyncio

import pytest

from audionet.lib.core.errors import WireError
from audionet.lib.core.timing import Timer
from audionet.lib.miner.limits import Caller
from audionet.lib.miner.pool import LocalReplica, ServiceDispatcher
from audionet.lib.services import TTS, TTSRequest
from tests.gated import GatedSpeech, open_gate, started, until

pytestmark = pytest.mark.timeout(120)


def scheduler(folder, max_waiting=2, timeout_s=None, stoppable=True) -> ServiceDispatcher:
    replica = LocalReplica(TTS, GatedSpeech(str(folder), stoppable), 1, "cpu-gated", "cpu")
    return ServiceDispatcher(
        TTS, [replica], Timer("test", device="cpu-gated"), max_waiting=max_waiting, timeout_s=timeout_s
    )


def request(word: str) -> TTSRequest:
    return TTSRequest(text=f"{word} speaks now.")


async def outcome(task) -> str:
    try:
        await task
        return "200"
    except WireError as error:
        return str(error.status)


def test_waiters_run_by_stake_and_overflow_is_refused(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, max_waiting=2)
        first = asyncio.create_task(pool.run(request("first"), 0))
        await until(lambda: started(tmp_path) == ["first"])
        low, high = asyncio.create_task(pool.run(request("low"), 1)), asyncio.create_task(pool.run(request("high"), 50))
        await until(lambda: pool.waiting == 2)
        with pytest.raises(WireError) as info:  # no more stake than the last in line: refused itself
            await pool.run(request("overflow"), 1)
        open_gate(tmp_path)
        await asyncio.gather(first, low, high)
        return info.value.status, pool

    status, pool = asyncio.run(scenario())
    assert status == 503 and started(tmp_path) == ["first", "high", "low"]
    assert pool.busy == 0 and pool.waiting == 0


def test_a_higher_stake_caller_displaces_the_last_waiter_when_the_line_is_full(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, max_waiting=2)
        tasks = {"running": asyncio.create_task(pool.run(request("running"), 1))}
        await until(lambda: pool.busy == 1)
        for word in ("early", "late"):
            tasks[word] = asyncio.create_task(pool.run(request(word), 1))
            await until(lambda: pool.waiting == len(tasks) - 1)
        tasks["equal"] = asyncio.create_task(pool.run(request("equal"), 1))  # no more stake: refused itself
        tasks["high"] = asyncio.create_task(pool.run(request("high"), 1000))  # displaces the newest of the lowest
        await until(lambda: tasks["equal"].done() and tasks["late"].done())
        open_gate(tmp_path)
        return {word: await outcome(task) for word, task in tasks.items()}, pool

    outcomes, pool = asyncio.run(scenario())
    assert outcomes == {"running": "200", "early": "200", "late": "503", "equal": "503", "high": "200"}
    assert started(tmp_path) == ["running", "high", "early"]
    assert pool.busy == 0 and pool.waiting == 0


def test_places_held_while_requests_are_parsed_refuse_the_overflow_early_and_yield_to_more_stake(tmp_path):
    """Issue 37: places held while a request was parsed outranked stake: a low-stake stream of texts being
    measured answered the top validator '503 line full'. A parsing place is a place in line like any other."""

    async def scenario():
        pool = scheduler(tmp_path, max_waiting=1)  # one slot and one waiting place: room for two
        parsing = asyncio.Event()  # the parse of the low-stake requests, held until the test lets it go
        low = [pool.enter(Caller(f"low{i}", 1, share=0.5)) for i in range(2)]
        with pytest.raises(WireError) as equal:  # no more stake than the last in line: refused before parsing
            pool.enter(Caller("equal", 1, share=0.5))
        parse = asyncio.create_task(pool.prepare(low[1], parsing.wait()))
        high = pool.enter(Caller("high", 1000, share=0.5))  # takes the last parsing place
        with pytest.raises(WireError) as displaced:
            await parse  # answered at once, its parse still running
        stages = pool.line.held()
        for ticket in (*low, high):
            pool.leave(ticket)
        return equal.value.status, displaced.value, stages, pool.line.holding

    equal, displaced, stages, holding = asyncio.run(scenario())
    assert equal == 503 and displaced.status == 503 and "more stake took this place" in str(displaced)
    assert stages == {"low0": {"parsing": 1, "waiting": 0, "generating": 0}, "high": stages["low0"]}
    assert holding == {}


def test_a_caller_holds_at_most_its_share_of_the_line(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, max_waiting=3)  # four places
        small = pool.enter(Caller("small", 10, share=0.1))  # 0.1 of 4, rounded up: one place
        with pytest.raises(WireError) as refused:
            pool.enter(Caller("small", 10, share=0.1))
        big = [pool.enter(Caller("big", 90, share=0.9)) for _ in range(3)]  # 0.9 of 4: four
        for ticket in (small, *big):
            pool.leave(ticket)
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 503 and "holds 1 of the 4 places of the tts line" in str(refused)


def test_a_long_request_the_measured_speed_says_cannot_finish_in_time_is_refused_before_it_starts(tmp_path):
    """Issue 37: texts at the length limit ran Kokoro to its timeout. A long one that the measured speed says
    cannot finish in time is refused before it starts; a short one still runs, so the speed stays measured."""
    long_text = "Long speaks for a while about the weather, the harbour and the ships that come and go. " * 3

    async def scenario():
        pool = scheduler(tmp_path, timeout_s=5.0)
        pool.replicas[0].speed.value = 10.0  # measured: 10 s of work per second of audio
        with pytest.raises(WireError) as refused:
            await pool.run(TTSRequest(text=long_text), 1)
        short = asyncio.create_task(pool.run(request("short"), 1))
        await until(lambda: started(tmp_path) == ["short"])
        open_gate(tmp_path)
        await short
        return refused.value, pool

    refused, pool = asyncio.run(scenario())
    assert refused.status == 503 and not refused.spent and "more than 2.5 s (half its 5 s timeout" in str(refused)
    assert started(tmp_path) == ["short"] and pool.waiting == 0 and pool.line.holding == {}
    assert pool.replicas[0].speed.value < 10.0  # the short request measured it again


def test_a_long_request_that_would_hold_its_slot_past_half_the_timeout_is_refused_so_one_behind_it_is_in_time(
    tmp_path,
):
    """Issue 45 (issue 37's flaky probe: 20.06 s of a 20 s timeout): a long text that would finish within the
    timeout but past its half made a request with more stake behind it wait past its own timeout. Refused now."""
    long_text = "Long speaks for a while about the weather, the harbour and the ships that come and go. " * 3

    async def scenario():
        pool = scheduler(tmp_path, timeout_s=20.0)
        size = TTS.planned_seconds(TTSRequest(text=long_text))
        pool.replicas[0].speed.value = 0.75 * 20.0 / size  # it would take 15 s: in time, but past the half
        with pytest.raises(WireError) as refused:
            await pool.run(TTSRequest(text=long_text), 1)
        pool.replicas[0].speed.value = 0.45 * 20.0 / size  # 9 s: runs
        running = asyncio.create_task(pool.run(TTSRequest(text=long_text), 1))
        await until(lambda: started(tmp_path) == ["long"])
        open_gate(tmp_path)
        await running
        return refused.value

    refused = asyncio.run(scenario())
    assert refused.status == 503 and "would take this miner 15 s" in str(refused)


def test_a_fresh_replica_learns_its_speed_from_a_request_abandoned_at_the_timeout(tmp_path):
    """Issue 45: a fresh miner never measured its speed from abandoned requests, so every long text ran to the
    timeout. The first one abandoned is its speed now (the seconds it ran for the audio it was to make)."""
    long_text = "Long speaks for a while about the weather, the harbour and the ships that come and go. " * 3

    async def scenario():
        pool = scheduler(tmp_path, timeout_s=0.5)
        with pytest.raises(WireError) as abandoned:
            await pool.run(TTSRequest(text=long_text), 1)  # its gate never opens: abandoned at the timeout
        open_gate(tmp_path)
        await until(lambda: pool.busy == 0)
        with pytest.raises(WireError) as refused:
            await pool.run(TTSRequest(text=long_text), 1)
        return abandoned.value, refused.value, pool

    abandoned, refused, pool = asyncio.run(scenario())
    assert abandoned.status == 503 and "did not finish within 0.5 s" in str(abandoned)
    assert refused.status == 503 and "at its measured speed" in str(refused) and pool.replicas[0].speed.value > 0


def test_a_waiter_that_leaves_frees_its_place_at_once_and_is_never_started(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, max_waiting=1)
        running = asyncio.create_task(pool.run(request("running"), 1))
        await until(lambda: pool.busy == 1)
        leaver = asyncio.create_task(pool.run(request("leaver"), 1))
        await until(lambda: pool.waiting == 1)
        leaver.cancel()
        with pytest.raises(asyncio.CancelledError):
            await leaver
        waiting_after = pool.waiting
        newcomer = asyncio.create_task(pool.run(request("newcomer"), 1))  # the line has room again
        await until(lambda: pool.waiting == 1)
        open_gate(tmp_path)
        await asyncio.gather(running, newcomer)
        return waiting_after, pool

    waiting_after, pool = asyncio.run(scenario())
    assert waiting_after == 0 and started(tmp_path) == ["running", "newcomer"]
    assert pool.busy == 0 and pool.waiting == 0


def test_a_generation_past_the_timeout_is_abandoned_and_its_slot_freed(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, timeout_s=0.5)
        stuck = asyncio.create_task(pool.run(request("stuck"), 1))
        after = asyncio.create_task(pool.run(request("after"), 1))
        status = await outcome(stuck)
        open_gate(tmp_path, "after")  # "stuck" stays shut: only its Stop can end it
        return status, await outcome(after), pool

    status, after, pool = asyncio.run(scenario())
    assert status == "503" and after == "200" and started(tmp_path) == ["stuck", "after"]
    replica = pool.replicas[0]
    assert replica.abandoned == 1 and replica.served == 1 and pool.busy == 0


def test_a_backend_that_cannot_stop_keeps_its_slot_busy_until_it_returns(tmp_path):
    async def scenario():
        pool = scheduler(tmp_path, timeout_s=0.5, stoppable=False)
        stuck = asyncio.create_task(pool.run(request("stuck"), 1))
        status = await outcome(stuck)  # the caller is answered at the timeout
        after = asyncio.create_task(pool.run(request("after"), 1))
        await until(lambda: pool.waiting == 1)
        busy_meanwhile = pool.busy
        open_gate(tmp_path)
        return status, busy_meanwhile, await outcome(after), pool

    status, busy_meanwhile, after, pool = asyncio.run(scenario())
    assert status == "503" and busy_meanwhile == 1 and after == "200"
    assert started(tmp_path) == ["stuck", "after"] and pool.replicas[0].abandoned == 1 and pool.busy == 0


def test_text_the_backend_would_speak_past_the_limit_in_its_voice_and_seed_is_refused_before_generation(tmp_path):
    """Issue 45: the length check reads text at espeak-ng's fastest rate, whatever the voice and seed asked;
    slower ones spoke the longest accepted texts past the limit, a 400 after generation that counted. The
    scheduler asks the backend's own reckoning (`answer_seconds`) when the text is long: a 400 at once, given back."""
    import json

    from audionet.lib.miner.pool.line import Ticket
    from audionet.models.baselines.espeak import EspeakSynthesizer
    from tests.stress.findings import LIMIT_UNITS, longest_accepted

    text = longest_accepted(LIMIT_UNITS["CJK"])
    espeak = EspeakSynthesizer()
    slow = next(  # a voice and seed that speak it past the answer limit
        (voice, seed)
        for voice in espeak.voices
        for seed in range(40)
        if espeak.answer_seconds(text, voice=voice, seed=seed, limit_s=TTS.answer_limit_s) > TTS.answer_limit_s
    )
    pool = ServiceDispatcher(TTS, [LocalReplica(TTS, espeak, 1, "cpu", "cpu")], Timer("test", device="cpu"))
    ticket = Ticket(0, Caller("v", 1.0), None)
    with pytest.raises(WireError) as refused:
        pool.parse(ticket, json.dumps({"text": text, "voice": slow[0], "seed": slow[1]}).encode())
    assert refused.value.status == 400 and not refused.value.spent and "speaks the text for more than" in str(refused)
    fast = pool.parse(ticket, json.dumps({"text": text, "voice": "en-us", "seed": 0}).encode())
    assert fast.text == text and 0 < ticket.answer_s <= TTS.answer_limit_s  # planned with its own length
    short = pool.parse(ticket, json.dumps({"text": "Short.", "voice": slow[0], "seed": slow[1]}).encode())
    assert short.text == "Short." and ticket.answer_s is None  # short text: not measured again
