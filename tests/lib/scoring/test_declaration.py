"""A service's judging as data: ranges, parts, penalties, and the breakdown that is the whole arithmetic
from raw measures to a score."""

import math

import pytest

from audionet.lib.scoring.declaration import Ceiling, Judging, Part, Penalty, Range
from audionet.lib.services import MUSIC, TTS, VC


def test_a_range_maps_either_way_and_clips_and_a_non_finite_value_is_the_floor():
    assert Range(1.0, 4.0)(2.5) == 0.5 and Range(1.0, 4.0)(9.0) == 1.0 and Range(1.0, 4.0)(0.0) == 0.0
    assert Range(1.0, 0.0)(0.25) == 0.75  # lower is better
    assert Range(0.0, 1.0)(math.nan) == 0.0 and Range(1.0, 0.0)(math.inf) == 0.0 and Range(0.0, 1.0)(None) == 0.0


def test_a_part_is_the_mixed_mean_of_its_measures_present_and_absent_when_none_is():
    part = Part("p", 1.0, {"a": Range(0, 1), "b": Range(0, 1)}, mix={"a": 3.0})
    assert part.value({"a": 1.0, "b": 0.0}) == pytest.approx(0.75)
    assert part.value({"b": 0.5}) == 0.5 and part.value({"c": 1.0}) is None


def test_a_penalty_is_one_when_unmeasured_and_full_when_the_measure_failed():
    penalty = Penalty("loop", "repetition", Range(0.8, 0.98), share=0.5)
    assert penalty.factor({}) == 1.0 and penalty.factor({"repetition": 0.5}) == 1.0
    assert (
        penalty.factor({"repetition": 0.89}) == pytest.approx(0.75) and penalty.factor({"repetition": math.nan}) == 0.5
    )


def test_the_breakdown_renormalises_over_parts_present_then_applies_every_penalty():
    judging = Judging(
        "x",
        gates=(),
        analyses=(),
        parts=(Part("a", 3.0, {"m": Range(0, 1)}), Part("b", 1.0, {"n": Range(0, 1)})),
        penalties=(Penalty("half", "k", Range(0, 1), share=0.5),),
    )
    assert judging.breakdown({"m": 1.0}).score == 1.0  # "b" unmeasured: left out, not a 0
    both = judging.breakdown({"m": 1.0, "n": 0.0, "k": 1.0})
    assert both.parts == {"a": 1.0, "b": 0.0} and both.penalties == {"half": 0.5} and both.score == pytest.approx(0.375)
    assert judging.breakdown({}).score == 0.0 and judging.measure_names() == {"m", "n", "k"}
    assert "mos_student" in TTS.judging.measure_names()  # a ceiling's measure is read too


def test_a_ceiling_caps_a_part_only_where_its_judge_says_less_and_is_off_when_unmeasured():
    part = Part("nat", 1.0, {"d": Range(2.0, 4.0)}, ceiling=Ceiling({"s": Range(2.0, 4.0)}, slack=0.1))
    assert part.value({"d": 4.0, "s": 5.0}) == 1.0  # the robust judge agrees: the part's own judge decides
    assert part.value({"d": 4.0, "s": 2.0}) == pytest.approx(0.1)  # a fooled judge is capped at the slack
    assert part.value({"d": 2.5, "s": 2.0}) == pytest.approx(0.1) and part.value({"d": 2.1, "s": 2.0}) == pytest.approx(
        0.05
    )
    assert part.value({"d": 4.0}) == 1.0  # the robust judge is off: no cap
    two = Ceiling({"s": Range(2.0, 4.0), "t": Range(0.0, 1.0)}, slack=0.1)  # the mean of the measures present
    assert two.bound({"s": 4.0, "t": 0.0}) == pytest.approx(0.6) and two.bound({"t": 0.5}) == pytest.approx(0.6)


def test_a_gate_scales_the_whole_score_by_its_part():
    judging = Judging(
        "x",
        gates=(),
        analyses=(),
        parts=(Part("nat", 0.4, {"d": Range(0, 1)}, gate=0.5), Part("clear", 0.6, {"w": Range(1, 0)})),
    )
    natural, robotic = judging.breakdown({"d": 1.0, "w": 0.0}), judging.breakdown({"d": 0.0, "w": 0.0})
    assert natural.score == 1.0 and natural.penalties == {"nat_gate": 1.0}
    assert robotic.score == pytest.approx(0.6 * 0.5) and robotic.penalties == {"nat_gate": 0.5}


def test_tts_and_vc_cap_what_a_perturbation_buys_with_the_naturalness_student():
    robotic = {"mos_distillmos": 4.8, "mos_student": 1.2, "wer": 0.0}  # DistillMOS driven to its top
    tts = TTS.judging.breakdown(robotic)
    assert tts.parts["naturalness"] == pytest.approx(0.05) and tts.score == pytest.approx((0.4 * 0.05 + 0.6) * 0.715)
    natural = TTS.judging.breakdown({"mos_distillmos": 4.2, "mos_student": 4.6, "wer": 0.0})
    assert natural.parts["naturalness"] == pytest.approx(2.2 / 2.3)  # far above the cap: DistillMOS decides
    clone = VC.judging.breakdown({**robotic, "speaker_cosine": 0.99, "pitch_offset_st": 0.0, "pitch_spread_log2": 0.0})
    assert clone.parts["similarity"] == pytest.approx(0.05)


def test_music_pays_clap_and_the_aesthetics_no_more_than_the_floored_judges_agree():
    """Both at their top (what a perturbation buys on the standard profile): synth-like content and tags cap
    them; a track whose onsets, key and tags are a neural track's is paid what CLAP and Audiobox say."""
    owned = {"clap_cosine": 0.6, "aes_pq": 9.0, "aes_ce": 9.0, "aes_cu": 9.0}
    flat = {"onsets_per_s": 2.0, "key_clarity": 0.6, "tag_adherence": 0.42, "key_fit": 0.1, **owned}
    capped = MUSIC.judging.breakdown(flat).parts
    slack = MUSIC.LEARNED_SLACK
    assert capped["aesthetics"] == pytest.approx((0.0 + 0.4) / 2 + slack)  # the musicality, 0.2, plus the slack
    assert capped["adherence"] == pytest.approx((0.08 + 0.1 / 0.6) / 2 + slack)
    lively = {"onsets_per_s": 4.5, "key_clarity": 0.8, "tag_adherence": 0.6, "key_fit": 0.55, **owned}
    paid = MUSIC.judging.breakdown(lively).parts
    assert paid["aesthetics"] == paid["adherence"] == 1.0
    assert MUSIC.judging.breakdown({**lively, "clap_cosine": 0.25}).parts["adherence"] == pytest.approx(0.5)


def test_voice_clone_pitch_counts_the_median_offset_and_the_spread():
    f0 = next(p for p in VC.judging.parts if p.name == "f0_match")
    assert f0.value({"pitch_offset_st": 0.0, "pitch_spread_log2": 0.0}) == pytest.approx(1.0)
    assert f0.value({"pitch_offset_st": 12.0, "pitch_spread_log2": 0.0}) == pytest.approx(0.3)  # an octave off
    assert f0.value({"pitch_offset_st": math.inf, "pitch_spread_log2": math.inf}) == 0.0  # nothing voiced


def test_every_built_in_declaration_names_weights_and_ranges_once():
    for judging in (TTS.judging, VC.judging, MUSIC.judging):
        names = [p.name for p in judging.parts] + [p.name for p in judging.penalties]
        assert len(names) == len(set(names)) and all(p.weight > 0 for p in judging.parts)
        assert all(r.zero != r.one for p in judging.parts for r in p.measures.values())
