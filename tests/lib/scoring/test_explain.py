"""A score in words, as the self-check, the public verdicts and localnet.html print it."""

import json

from audionet.lib.scoring.explain import in_words
from audionet.lib.services import MUSIC, TTS


def components(judging, measures: dict) -> dict:
    """A verdict row's components (jobs.Verdict.components), through JSON as the verdicts file carries them."""
    breakdown = judging.breakdown(measures)
    taken = {f"{name}_penalty": 1.0 - factor for name, factor in breakdown.penalties.items()}
    return json.loads(json.dumps({**measures, **breakdown.parts, **taken}))


def test_a_ceiling_that_held_a_part_is_named_with_what_it_took_and_one_that_did_not_is_not():
    bought = components(TTS.judging, {"mos_distillmos": 4.8, "mos_student": 1.2, "wer": 0.0})  # DistillMOS at its top
    honest = components(TTS.judging, {"mos_distillmos": 4.2, "mos_student": 4.6, "wer": 0.0})
    held = "ceilings: naturalness held 0.95 under its own judges; penalties: naturalness gate took 28%"
    assert in_words(TTS.judging, [bought]) == f"parts naturalness 0.05, intelligibility 1.00; {held}"
    gate = "penalties: naturalness gate took 1%"
    assert in_words(TTS.judging, [honest]) == f"parts naturalness 0.96, intelligibility 1.00; {gate}"
    both = in_words(TTS.judging, [bought, honest])
    assert "; ceilings: naturalness held 0.47 under its own judges (1 of 2 clips); " in both


def test_music_says_when_its_floored_judges_held_clap_and_the_aesthetics():
    owned = {"clap_cosine": 0.6, "aes_pq": 9.0, "aes_ce": 9.0, "aes_cu": 9.0}
    flat = {"onsets_per_s": 2.0, "key_clarity": 0.6, "tag_adherence": 0.42, "key_fit": 0.1, **owned}
    line = in_words(MUSIC.judging, [components(MUSIC.judging, flat)])
    assert "ceilings: adherence held 0.73 under its own judges, aesthetics held 0.65 under its own judges;" in line
