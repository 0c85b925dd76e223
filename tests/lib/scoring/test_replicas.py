"""Evaluators on several devices: the same verdicts as on one, each clip judged once, a slow device given less."""

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.lib.core.dispatch import ROUND_ROBIN, Speed
from audionet.lib.scoring.jobs import Clip, Expect
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.replicas import EvaluatorReplicas, report_line
from audionet.lib.services import MUSIC, TTS, VC


def clips(seconds: list[float]) -> list[Clip]:
    return [Clip(Audio(np.zeros(int(s * 1000), np.float32), 1000), Expect((0.0, 60.0)), {}) for s in seconds]


def device(name: str, s_per_audio_s: float = 0.0):
    return SimpleNamespace(name=name, device="cpu", cost=s_per_audio_s)


def mark(evaluators, share, timed):
    """An analysis that records which device judged each clip, costing the device's time per audio second."""
    time.sleep(evaluators.cost * sum(clip.audio.seconds for clip in share))
    for clip in share:
        clip.measures["judged_on"] = evaluators.name
        clip.measures["thread"] = threading.current_thread().name


def test_measured_speeds_split_a_batch_by_earliest_finish_and_round_robin_splits_it_evenly():
    replicas = EvaluatorReplicas([device("fast"), device("slow")], ["fast", "slow"])
    fast, slow = Speed(), Speed()
    fast.value, slow.value = 1.0, 3.0
    replicas.speeds["tts"] = [fast, slow]
    batch = clips([1.0] * 8)
    shares = replicas.split("tts", batch)
    assert [len(share) for share in shares] == [6, 2]  # the planner's own case: 6 s on both, not 8 s on one
    assert sorted(map(id, shares[0] + shares[1])) == sorted(map(id, batch))  # every clip once
    robin = EvaluatorReplicas([device("fast"), device("slow")], ["fast", "slow"], policy=ROUND_ROBIN)
    assert [len(share) for share in robin.split("tts", batch)] == [4, 4]


def test_a_slow_device_is_measured_and_then_given_fewer_clips():
    replicas = EvaluatorReplicas([device("fast", 0.005), device("slow", 0.02)], ["fast", "slow"])
    for _ in range(3):  # the first batch splits evenly (nothing measured yet), the next ones by measured speed
        batch = clips([2.0] * 10)
        replicas.run("tts", batch, [mark], lambda stage, audios: None)
        assert all(clip.measures["judged_on"] in ("fast", "slow") for clip in batch)
    report = replicas.take_report()
    counts = {row["label"]: row["clips"] for row in report}
    assert counts["fast"] + counts["slow"] == 30 and counts["fast"] > counts["slow"] + 6
    speeds = {row["label"]: row["s_per_audio_s"]["tts"] for row in report}
    assert speeds["slow"] > 2 * speeds["fast"]  # measured side by side: a ratio, not a speed
    assert report_line(report).startswith(f"fast {counts['fast']} clips (tts ")
    assert all(row["clips"] == 0 for row in replicas.take_report())  # counts start again after a report
    replicas.close()


def test_one_device_judges_in_the_callers_thread_and_a_failure_on_one_device_ends_the_batch():
    batch = clips([1.0, 1.0])
    EvaluatorReplicas([device("only")]).run("tts", batch, [mark], lambda stage, audios: None)
    assert {clip.measures["thread"] for clip in batch} == {threading.current_thread().name}

    def fails_on_slow(evaluators, share, timed):
        if evaluators.name == "slow":
            raise RuntimeError("out of memory")
        mark(evaluators, share, timed)

    replicas = EvaluatorReplicas([device("fast"), device("slow")], ["fast", "slow"], policy=ROUND_ROBIN)
    with pytest.raises(RuntimeError, match="out of memory"):
        replicas.run("tts", clips([1.0] * 4), [fails_on_slow], lambda stage, audios: None)
    replicas.close()


@pytest.fixture(scope="module")
def rounds():
    """A round of valid, distinct answers per service (the validator-scale study's spliced speech and music)."""
    import tempfile

    from audionet.benchmarks.evaluator_devices.main import premade_round

    with tempfile.TemporaryDirectory() as workdir:
        return premade_round(["tts", "vc", "music"], 4, seed=3, workdir=workdir)


@pytest.mark.slow  # the offline profile loaded twice, three services judged twice (40 s on 2 busy cores)
def test_two_replicas_give_every_clip_the_verdict_one_device_gives(rounds):
    two = Judge.load(devices="cpu,cpu")
    assert len(two.replicas) == 2 and two.replicas.members[0] is not two.replicas.members[1]  # loaded twice
    one = Judge(two.replicas.members[1])  # the second device's evaluators alone judge every clip
    for service in (TTS, VC, MUSIC):
        jobs = rounds[service.name]  # each seeded (`premade_round`): the same listening noise in both runs
        alone = one.score(service.judging, jobs, remember=False)
        split = two.score(service.judging, jobs, remember=False)
        assert all(row["clips"] > 0 for row in two.replicas.take_report()), service.name  # both devices judged
        for a, b in zip(alone, split):
            assert a.gates == b.gates and a.measures.keys() == b.measures.keys(), service.name
            assert b.score == pytest.approx(a.score, abs=1e-6), (service.name, a, b)
            assert b.measures == pytest.approx(a.measures, rel=1e-5, abs=1e-6), service.name
    two.replicas.close()
