"""The white-box attack study (benchmarks/attacks/): the attacker's torch view of the Judge is the Judge
(ports against the ONNX they stand for, the surrogate score against the declaration's breakdown), a short
attack buys reward from the undefended Judge and not from the defended one, and the study writes its files."""

import json

import numpy as np
import pytest

from audionet.benchmarks.attacks import main as attacks
from audionet.benchmarks.attacks import report
from audionet.benchmarks.attacks.listening import Seeds, clean_of
from audionet.benchmarks.attacks.materials import cases_for
from audionet.benchmarks.attacks.measures import differentiable
from audionet.benchmarks.attacks.ports import dvector_port, polyphase_resampler, resampled
from audionet.benchmarks.attacks.surrogate import Surrogate, score
from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.devices import device_slug
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import MUSIC, TTS, registry
from tests.speech import speech

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def judge():
    return Judge.load(devices="cpu")


def test_the_resampler_is_scipys_polyphase_resampling():
    import torch
    from scipy.signal import resample_poly

    x = np.random.default_rng(0).standard_normal(32_000 + 7).astype(np.float32)
    for rate_in, rate_out, up, down in ((32_000, 22_050, 441, 640), (32_000, 16_000, 1, 2), (16_000, 22_050, 441, 320)):
        ours = polyphase_resampler(len(x), rate_in, rate_out)(torch.from_numpy(x)).numpy()
        assert np.abs(ours - resample_poly(x, up, down)).max() < 1e-5
        for length in (len(x), len(x) - 300, 4096):  # through one port per block of lengths, cut to each length
            ours = resampled(torch.from_numpy(x[:length]), rate_in, rate_out).numpy()
            assert np.abs(ours - resample_poly(x[:length], up, down)).max() < 1e-5


def test_eots_random_delays_share_one_resampler_port():
    import torch

    from audionet.benchmarks.attacks import ports

    ports._resampler.cache_clear()
    for delay in range(0, 320, 10):  # EOT's views: up to 10 ms of leading zeros at 32 kHz
        resampled(torch.zeros(20_000 + delay), 32_000, 22_050)
    assert ports._resampler.cache_info().currsize == 1  # a port is 120 MB for 15 s of music: one per length leaked


def test_the_dvector_port_embeds_as_the_int8_onnx_does(judge):
    import torch

    clip = resample(speech("The port hears the same voice as the original."), 16_000)
    real = judge.evaluators.speaker.embed([clip])[0]
    with torch.no_grad():
        ported = dvector_port()(torch.from_numpy(clip.samples)).numpy()
    assert float(real @ ported) > 0.999


@pytest.mark.parametrize("service", ["tts", "music"])
def test_the_attackers_score_is_the_judges_score_on_the_clean_answer(judge, service):
    """Every differentiable measure (DistillMOS, the student; musicnn's tags, YAMNet and basic-pitch in torch)
    equals the real evaluator's, and the surrogate's arithmetic equals the declaration's."""
    import torch

    chosen = registry.get(service)
    for case in cases_for(service, 1, 1, seed=0)[:2]:
        verdict = judge.score(chosen.judging, [chosen.job(case.request, case.audio)], remember=False)[0]
        functions = differentiable(
            judge.evaluators, chosen.judging, chosen.expect(case.request), case.audio.sample_rate
        )
        assert functions, case.label
        objective = Surrogate(
            chosen.judging, functions, {k: v for k, v in verdict.measures.items() if k not in functions}
        )
        measured = objective.measures(torch.from_numpy(case.audio.samples))
        for name, value in measured.items():
            if name == "mos_student":  # predict clips to 1..5; the attacker climbs the unclipped output below it
                value = min(5.0, max(1.0, value))
            # YAMNet: int8 rounding inside the graph, further off on the floored answer (synth #0: 0.876 vs 0.915)
            tolerance = 0.05 if name == "music_probability" else 1e-3
            assert value == pytest.approx(verdict.measures[name], abs=tolerance), (case.label, name)
        assert float(score(chosen.judging, verdict.measures)) == pytest.approx(verdict.score, abs=1e-5)
        # within 0.03 on music: YAMNet's port reads synth #0's floored answer 0.04 low, under its penalty's 0.9
        allowed = 0.03 if service == "music" else 0.01
        assert float(objective(torch.from_numpy(case.audio.samples)).detach()) == pytest.approx(
            verdict.score, abs=allowed
        )


def test_the_ceiling_arithmetic_of_the_surrogate_matches_the_declaration():
    for measures in (
        {"mos_distillmos": 4.8, "mos_student": 1.0, "wer": 0.1},
        {"mos_distillmos": 3.1, "mos_student": 4.9, "wer": 0.8},
        {"mos_distillmos": 1.5, "mos_student": 2.6, "wer": 0.0},
    ):
        assert float(score(TTS.judging, measures)) == pytest.approx(TTS.judging.breakdown(measures).score, abs=1e-6)
    music = {
        "tag_adherence": 0.5,
        "music_probability": 0.6,
        "onsets_per_s": 2.0,
        "key_clarity": 0.7,
        "quality": 0.8,
        "active": 0.9,
        "repetition": 0.5,
        "speech_likeness": 0.1,
        "duration_error": 0.2,
    }
    assert float(score(MUSIC.judging, music)) == pytest.approx(MUSIC.judging.breakdown(music).score, abs=1e-6)


def test_a_short_attack_buys_the_undefended_judge_and_not_the_defended_one(tmp_path):
    argv = [
        "--services",
        "tts",
        "--clips",
        "1",
        "--bounds",
        "0.003",
        "--steps",
        "8",
        "--eot",
        "0",
        "--check-every",
        "4",
        "--out",
        str(tmp_path),
    ]
    assert attacks.main(argv) == 0
    stem = tmp_path / device_slug("cpu") / "attacks-offline-tts"
    data = json.loads(stem.with_suffix(".json").read_text())
    assert stem.with_suffix(".md").read_text().startswith("Regenerate: `audionet-bench attacks --services tts")
    assert stem.with_suffix(".png").stat().st_size > 0
    found = data["services"]["tts"]["findings"]["attacked"]
    assert found["undefended"]["bounds"]["0.003"]["gain"] > 0.1  # the attack code works
    assert found["defended"]["bounds"]["0.003"]["gain"] <= 0.05  # and the defence holds at that size
    (row,) = data["services"]["tts"]["attacked"]
    assert all(run["snr_db"] > 25 for runs in row["runs"].values() for run in runs)


def test_the_undefended_judge_is_the_same_judge_without_its_guards(judge):
    bare = attacks.undefended(judge)
    assert [m.name for m in judge.evaluators.mos] == ["distillmos", "student"]
    assert [m.name for m in bare.evaluators.mos] == ["distillmos"] and bare.evaluators.asr is judge.evaluators.asr
    assert judge.evaluators.tags.floor_db is not None and bare.evaluators.tags.floor_db is None  # musicnn's floor
    assert bare.evaluators.tags._networks is judge.evaluators.tags._networks  # the same networks, not a reload
    clip = Audio(np.zeros(16_000, np.float32), 16_000)
    assert bare.evaluators.vad.speech_ratio([clip]) == [0.0]


def test_the_notes_a_short_attack_buys_on_the_undefended_music_judge_the_defended_one_does_not_pay(judge):
    """synth #1 at L-inf 0.001, 15 PGD steps of the attacker whose note stand-in asks for the note activation over
    the shortest note (measured: +0.101 undefended, +0.003 defended): the defended Judge reads the music's onsets
    and key from the signal under its floor, not from basic-pitch's notes (docs/scoring.md#judges-that-cannot-be-
    bought)."""
    from audionet.benchmarks.attacks import pgd

    judges = attacks.judges_for("music", judge, attacks.undefended(judge))
    assert "music_floor" in judges["defended"].judging.analyses
    assert "music_floor" not in judges["undefended"].judging.analyses
    case = [c for c in cases_for("music", 2, 1, seed=0) if c.attacked][1]
    gains = {}
    seeds = Seeds.for_study(0, own=1, validator=1)  # the music Judge hears no listening noise: one seed is all
    for which, judged in judges.items():
        clean = clean_of(judged, case, seeds, judged.verdict(case, case.audio, seeds.validator[0]).score)
        settings = pgd.Settings(0.001, 15, 0, 15, seed=1)
        gains[which] = attacks.attack_case(judged, case, settings, clean, seeds, lambda line: None)["gain"]
    assert gains["undefended"] > 0.05 and gains["defended"] < 0.02, gains


def test_the_floored_music_judge_keeps_what_the_neural_tracks_earned(judge):
    """The honest side of the defended music Judge (the floors, the onsets and key from the signal), issue 46's
    target: the 28 labelled neural tracks keep >= 95 % on average and each >= 90 % (measured: 101.2 % on average,
    the least 91.4 %, neural tracks #18)."""
    judges = attacks.judges_for("music", judge, attacks.undefended(judge))
    tracks = [c for c in cases_for("music", 1, 28, seed=0) if not c.attacked]
    before, after = ([judged.verdict(c, c.audio).score for c in tracks] for judged in judges.values())
    assert np.mean(after) >= 0.95 * np.mean(before), (before, after)
    assert all(a >= 0.90 * b for a, b in zip(after, before)), (before, after)


def test_eot_left_out_of_an_attacked_service_is_named():
    def left_out(*argv: str) -> list[str]:
        return attacks.without_eot(attacks.build_parser("attacks").parse_args(list(argv)))

    assert left_out("--services", "vc,music", "--eot", "2") == ["vc", "music"]  # --eot-services: tts
    assert left_out("--services", "vc,music", "--eot", "2", "--eot-services", "vc") == ["music"]
    assert left_out("--services", "vc", "--eot", "0") == [] and left_out("--services", "tts", "--eot", "2") == []


def test_no_headline_pgd_leaves_eot_pgd_alone_where_it_runs():
    def kinds(service: str, headline: bool, *argv: str) -> tuple[int, ...]:
        args = attacks.build_parser("attacks").parse_args(["--eot", "2", *argv])
        return attacks.attack_kinds(args, service, headline)

    assert kinds("tts", True) == (0, 2) and kinds("tts", False) == (0,)
    assert kinds("tts", True, "--no-headline-pgd") == (2,)
    assert kinds("vc", True, "--no-headline-pgd") == (0,)  # no EOT-PGD on vc here: plain PGD stays
    assert kinds("vc", True, "--no-headline-pgd", "--eot-services", "vc") == (2,)
    settings = {"steps": 200, "headline": 0.003, "eot": 2, "eot_services": ["vc"], "headline_pgd": False}
    assert report.headline_attacks(settings).startswith("EOT-PGD with 200 steps at the headline bound 0.003")
    assert report.headline_attacks({**settings, "headline_pgd": True}).startswith("PGD with 200 steps")
