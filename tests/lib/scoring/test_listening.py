"""The ASR hears an answer through the Judge's own noise (lib/scoring/listening.py): a function of the verdict's
seed, so the same answer and seed give the same verdict, different seeds different ASR inputs, and the seed is
drawn per verdict (secret unless given) and kept in the verdict and the validator's record of it."""

from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.listening import DEAF, NOISE_STD, Listening, seeds_from
from audionet.lib.services import TTS, TTSRequest
from audionet.lib.validator.client import Answer, Target
from audionet.lib.validator.round import score_round
from tests.speech import VOICE_B

TEXT = "Alice walked to the harbour at 7 o'clock and waited for the rain to stop."


def test_the_noise_is_a_function_of_the_seed_at_the_declared_level():
    audio = Audio(0.1 * np.sin(np.linspace(0, 3000, 48_000)), 16_000)
    (once,), (again,), (other,) = (Listening().heard(audio, seed) for seed in (7, 7, 8))
    assert np.array_equal(once.samples, again.samples) and not np.array_equal(once.samples, other.samples)
    assert np.std(once.samples - audio.samples) == pytest.approx(NOISE_STD, rel=0.05)
    first, second = Listening(draws=2).heard(audio, 7)
    assert np.array_equal(first.samples, once.samples) and not np.array_equal(first.samples, second.samples)
    assert DEAF.heard(audio, 7) == [audio]  # the Judge before the defence hears the answer as sent
    with pytest.raises(ValueError):
        Listening(-0.1)


def test_seeds_are_secret_unless_a_seed_makes_them_reproducible():
    given, again = seeds_from(5), seeds_from(5)
    assert [given() for _ in range(3)] == [again() for _ in range(3)]
    secret = seeds_from(None)
    assert len({secret() for _ in range(8)}) == 8 and all(0 <= secret() < 2**63 for _ in range(8))


@pytest.fixture(scope="module")
def judge():
    return Judge.load(devices="cpu")


@pytest.fixture
def heard(judge, monkeypatch):
    """What the ASR was given, call by call (the real Whisper still transcribes it)."""
    calls, transcribe = [], judge.evaluators.asr.transcribe

    def recording(clips):
        calls.append([c.samples.copy() for c in clips])
        return transcribe(clips)

    monkeypatch.setattr(judge.evaluators.asr, "transcribe", recording)
    return calls


def test_an_answers_verdict_is_a_function_of_its_seed(judge, heard, speech):
    clip = speech(TEXT)

    def job(seed=None):
        return TTS.job(TTSRequest(text=TEXT), clip, "uid 1", seed=seed)

    first, again, other = (judge.score(TTS.judging, [job(seed)], remember=False)[0] for seed in (11, 11, 12))
    assert first.gate is None and (first.seed, again.seed, other.seed) == (11, 11, 12)
    assert (again.score, again.measures, again.parts) == (first.score, first.measures, first.parts)
    (a,), (b,), (c,) = heard
    assert np.array_equal(a, b) and not np.array_equal(a, c)  # the WER's input: the answer plus the seed's noise
    assert np.std(a - clip.samples) == pytest.approx(NOISE_STD, rel=0.05)
    drawn = judge.score(TTS.judging, [job(), job()], remember=False)  # no seed given: the Judge draws one per verdict
    assert all(isinstance(v.seed, int) for v in drawn) and drawn[0].seed != drawn[1].seed


def test_the_validator_records_the_seed_each_verdict_was_judged_with(judge, speech):
    request, clip = TTSRequest(text=TEXT), speech(TEXT)
    answers = [Answer(Target(uid, f"5Hot{uid}", "127.0.0.1:1"), TTS.name, request, 0.1, clip) for uid in (1, 2)]
    answers[1] = replace(answers[1], audio=speech(TEXT, VOICE_B))  # not a copy of uid 1's
    first = score_round(answers, judge, {TTS.name: TTS}, seeds=seeds_from(3))
    judge.duplicates.forget()  # the same answers again are not copies of the first round's
    again = score_round(answers, judge, {TTS.name: TTS}, seeds=seeds_from(3))
    expected = seeds_from(3)
    assert [s.seed for s in first] == [expected(), expected()] == [s.seed for s in again]
    assert [s.score for s in first] == [s.score for s in again] and first[0].gate is None
