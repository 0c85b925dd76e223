"""The Judge on real signals: speech vs tricks (TTS), right vs wrong voice and replay (VC),
music vs noise and speech (music), near-duplicates, and non-finite scores."""

import base64
import math
from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.core.audio import Audio, encode_flac, resample
from audionet.lib.scoring.analyses import tempo_error
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import MUSIC, TTS, VC, MusicRequest, TTSRequest, VCRequest
from audionet.lib.validator.client import Answer, Target
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.round import score_round
from audionet.lib.validator.state import ScoreState
from tests.speech import VOICE_A, VOICE_B

TEXT = "Alice walked to the harbour at 7 o'clock and waited for the rain to stop."
TARGET = "Our train leaves from the market at nine thirty, so pack light."
REFERENCE_TEXT = "Bright sunlight filled the library as Hana opened the window."


@pytest.fixture(scope="module")
def judge():
    return Judge.load(devices="cpu")


@pytest.fixture(autouse=True)
def fresh_history(judge):
    judge.duplicates.forget()  # tests reuse clips; cross-round history must not leak between them


def noise(seconds, rate=22_050, level=0.1, seed=0):
    return Audio(level * np.random.default_rng(seed).standard_normal(int(seconds * rate)), rate)


def test_real_speech_outscores_noise_silence_reversed_and_truncated(judge, speech):
    clip = speech(TEXT)
    half = Audio(clip.samples[: len(clip.samples) // 2], clip.sample_rate)
    candidates = {
        "speech": clip,
        "noise": noise(clip.seconds),
        "silence": Audio(np.zeros_like(clip.samples), clip.sample_rate),
        "reversed": Audio(clip.samples[::-1].copy(), clip.sample_rate),
        "truncated": half,
    }
    jobs = [TTS.job(TTSRequest(text=TEXT), audio, name) for name, audio in candidates.items()]
    verdicts = dict(zip(candidates, judge.score(TTS.judging, jobs)))
    best = verdicts["speech"]
    assert best.gate is None and best.components["wer"] < 0.4, best
    assert set(best.gates) == set(TTS.judging.gates) and 0 < best.score <= 1
    for name in ("noise", "silence", "reversed", "truncated"):
        assert verdicts[name].score < best.score - 0.2, (name, verdicts[name])
    assert verdicts["silence"].gates["silent"] and verdicts["noise"].gates["no_speech"]


def vc_request(speech, voice=VOICE_A) -> VCRequest:
    reference = speech(REFERENCE_TEXT, voice)
    return VCRequest(
        text=TARGET, reference_text=REFERENCE_TEXT, reference_flac_b64=base64.b64encode(encode_flac(reference)).decode()
    )


def test_clone_in_reference_voice_beats_other_voice_and_replay_scores_zero(judge, speech):
    request = vc_request(speech)
    reference = request.reference()
    replayed = Audio(resample(reference, 16_000).samples * 0.5, 16_000)  # resampled and quieter
    jobs = [
        VC.job(request, speech(TARGET, VOICE_A), "same"),
        VC.job(request, speech(TARGET, VOICE_B), "other"),
        VC.job(request, replayed, "replay"),
    ]
    same, other, replay = judge.score(VC.judging, jobs)
    assert same.gate is None and other.gate is None
    assert same.components["speaker_cosine"] > other.components["speaker_cosine"] + 0.3
    assert same.score > other.score + 0.2
    # pitch accuracy (reported, not rewarded): the same female voice sits near the reference's pitch,
    # the male voice far below it
    assert abs(same.components["f0_offset_st"]) < 2.0 and other.components["f0_offset_st"] < -4.0
    assert same.components["f0_rmse_hz"] < other.components["f0_rmse_hz"]
    assert replay.score == 0.0 and "reference" in replay.gates["replay"]


def test_real_music_outscores_the_synth_noise_and_speech(judge, speech):
    from audionet.benchmarks.common.labelled_music import excerpt, labelled_tracks, prompts
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    track = labelled_tracks()[0]
    prompt = prompts(track)[0]
    talk = speech("It is never too late to learn something new, said Alice with a smile, and then she left the room.")
    seconds = round(talk.seconds, 1)
    request = MusicRequest(prompt=prompt, seconds=seconds)
    answers = {
        "neural": excerpt(track, 6.0, seconds),
        "synth": ProceduralMusicGenerator().generate(prompt, seconds, seed=1),
        "noise": noise(seconds),
        "speech": talk,
    }
    verdicts = {
        name: judge.score(MUSIC.judging, [MUSIC.job(request, audio, name)], remember=False)[0]
        for name, audio in answers.items()
    }
    real = verdicts["neural"]
    assert real.gate is None and real.score > 0.6, real
    assert verdicts["synth"].score < real.score and real.measures["music_probability"] > 0.8
    for name in ("noise", "speech"):
        assert verdicts[name].score < real.score - 0.5, (name, verdicts[name])
    assert verdicts["speech"].penalties["not_music"] < 0.5  # speech sent as music is not music


def test_music_at_the_asked_tempo_outscores_music_at_another_tempo(judge):
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    synth = ProceduralMusicGenerator()
    request = MusicRequest(prompt="upbeat folk with acoustic guitar and drums, 96 bpm", seconds=8.0)
    on_tempo = synth.generate(request.prompt, 8.0, seed=2)
    off_tempo = synth.generate("upbeat folk with acoustic guitar and drums, 130 bpm", 8.0, seed=2)
    right, wrong = judge.score(
        MUSIC.judging, [MUSIC.job(request, on_tempo, "a"), MUSIC.job(request, off_tempo, "b")], remember=False
    )
    assert right.components["bpm"] == pytest.approx(96, rel=0.06) and right.components["tempo_match"] == 1.0
    assert wrong.components["tempo_match"] < 0.2 and wrong.score < right.score - 0.05
    assert tempo_error(48.0, 96) == tempo_error(192.0, 96) == 0.0  # half / double time is the same tempo


def test_near_duplicates_score_zero_within_a_round_and_across_rounds(judge, speech):
    clip = speech(TEXT)
    flipped = clip.samples.copy()
    flipped[len(flipped) // 2] *= -1.0
    request = TTSRequest(text=TEXT)
    jobs = [
        TTS.job(request, clip, "uid 1"),
        TTS.job(request, Audio(clip.samples * 0.7, clip.sample_rate), "uid 2"),
        TTS.job(request, Audio(flipped, clip.sample_rate), "uid 3"),
        TTS.job(request, speech(TEXT, VOICE_B), "uid 4"),
    ]
    verdicts = judge.score(TTS.judging, jobs)
    assert [v.score == 0.0 for v in verdicts] == [True, True, True, False], verdicts
    assert "uid 2" in verdicts[0].gates["duplicate"]
    # Next round: a miner resubmits uid 4's clip at a new gain.
    (later,) = judge.score(
        TTS.judging, [TTS.job(request, Audio(jobs[3].audio.samples * 1.2, clip.sample_rate), "uid 5")]
    )
    assert later.score == 0.0 and "earlier answer (uid 4)" in later.gates["duplicate"]


def test_a_round_judged_as_it_arrives_gets_the_verdicts_of_the_whole_round_at_once(judge, speech):
    """One answer at a time, each evaluated before the next arrives: the same scores as one batch, and a copy of
    an answer already evaluated makes both score 0 (the first one too, at the round's close)."""
    clip = speech(TEXT)
    request = TTSRequest(text=TEXT)
    answers = [clip, speech(TEXT, VOICE_B), noise(3.0), Audio(clip.samples * 0.6, clip.sample_rate)]
    # seeded: the same listening noise both ways
    jobs = [TTS.job(request, audio, f"uid {n + 1}", seed=n) for n, audio in enumerate(answers)]
    at_once = judge.score(TTS.judging, jobs, remember=False)
    session = judge.open(TTS.judging, remember=False)
    for job in jobs:
        session.add([job])
        session.evaluate()
    assert session.verdicts[0].score > 0  # evaluated before its copy came in
    arriving = session.close()
    assert [v.score for v in arriving] == [v.score for v in at_once] and [v.gate for v in arriving] == [
        v.gate for v in at_once
    ]
    assert arriving[0].score == arriving[3].score == 0.0 and "uid 4" in arriving[0].gates["duplicate"]
    assert arriving[1].score > 0 and arriving[2].gate


def test_validator_round_rewards_and_non_finite_scores_never_reach_weights(judge, speech):
    request = TTSRequest(text=TEXT)
    answers = [
        Answer(Target(uid, f"hk{uid}", "x:1"), "tts", request, 1.0, audio=audio, error=error)
        for uid, audio, error in [
            (0, speech(TEXT), None),
            (1, speech(TEXT, VOICE_B), None),
            (2, None, "HTTP 500: generation failed"),
        ]
    ]
    scored = score_round(answers, judge, {"tts": TTS})
    assert scored[0].reward > 0 and scored[1].reward > 0 and scored[0].components["wer"] < 0.5
    assert [s.reward for s in scored[:2]] == [s.score for s in scored[:2]]  # the reward is the score itself
    assert scored[2].reward == 0.0 and "HTTP 500" in scored[2].gate
    state = ScoreState(("tts",), curve=replace(CURVE, eligible_after=1))
    state.sync(["a", "b", "c"])
    for uid, value in enumerate([math.nan, math.inf, 0.5]):
        state.update("tts", uid, value)
    weights = state.weights()["tts"]
    assert all(math.isfinite(w) for w in weights) and weights == [0.0, 0.0, 1.0]


def test_measure_hook_sees_each_evaluator(judge, speech):
    from contextlib import contextmanager

    seen = []

    @contextmanager
    def measure(service, stage, audio_seconds=None):
        seen.append((service, stage, audio_seconds))
        yield

    judge.score(TTS.judging, [TTS.job(TTSRequest(text=TEXT), speech(TEXT), "a")], measure=measure)
    assert {stage for _, stage, _ in seen} == {"gates", "vad", "duplicates", "mos/distillmos", "mos/student", "asr"}
    assert all(service == "tts" and seconds > 1.0 for service, _, seconds in seen)


def test_every_verdicts_breakdown_follows_from_its_declaration_and_measures_alone(judge, speech):
    """ "Why did this clip get 0.4?" is answered by the service's declaration and the verdict's raw measures:
    recomputing the breakdown from them gives the verdict's parts, penalties and score exactly."""
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    music = MusicRequest(prompt="calm piano ballad, 70 bpm", seconds=5.0)
    vc = vc_request(speech)
    rounds = [
        (TTS, [TTS.job(TTSRequest(text=TEXT), speech(TEXT), "a"), TTS.job(TTSRequest(text=TEXT), noise(4.0), "b")]),
        (VC, [VC.job(vc, speech(TARGET, VOICE_A), "a"), VC.job(vc, speech(TARGET, VOICE_B), "b")]),
        (MUSIC, [MUSIC.job(music, ProceduralMusicGenerator().generate(music.prompt, 5.0, seed=3), "a")]),
    ]
    for service, jobs in rounds:
        for verdict in judge.score(service.judging, jobs, remember=False):
            if verdict.gate is None:
                again = service.judging.breakdown(verdict.measures)
                assert (again.parts, again.penalties, again.score) == (verdict.parts, verdict.penalties, verdict.score)
                # a clip that passed every gate scores above 0 unless a penalty took all of it (another voice)
                assert verdict.score > 0 or min(verdict.penalties.values()) == 0.0
                assert set(verdict.measures) >= {
                    m for p in service.judging.parts for m in p.measures if m in verdict.measures
                }
