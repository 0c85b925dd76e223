"""The shipped prompt sets: valid on the wire, varied, reproducible, fully filled."""

import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.core.protocol import MAX_TEXT_CHARS
from audionet.lib.prompts import (
    all_descriptions,
    all_sentences,
    make_music_prompt,
    make_music_request_text,
    make_seed,
    make_sentence,
    make_tts_prompt,
    normalise_for_wer,
    spoken_form,
    stated_bpm,
)
from audionet.lib.prompts.music import genres, tempo_word
from audionet.lib.prompts.sets import check_slots, read_sections
from audionet.lib.prompts.tts import MAX_WORDS, MIN_WORDS, fill
from audionet.lib.services import MusicRequest, TTSRequest
from tests.files import REPO

DRAWS = 3000
LEFTOVER = re.compile(r"[{}]")


@pytest.fixture(scope="module")
def tts_prompts():
    rng = np.random.default_rng(20261122)
    return [make_tts_prompt(rng) for _ in range(DRAWS)]


@pytest.fixture(scope="module")
def music_prompts():
    rng = np.random.default_rng(20261122)
    return [make_music_request_text(rng) for _ in range(DRAWS)]


def test_shipped_sets_have_several_hundred_lines_in_every_difficulty_and_genre():
    sentences, descriptions = all_sentences(), all_descriptions()
    assert len(sentences) >= 300 and len(descriptions) >= 300
    assert len({line for _, line in sentences}) == len(sentences), "a sentence is shipped twice"
    assert len({line for _, line in descriptions}) == len(descriptions), "a description is shipped twice"
    tags = {tag for tag, _ in sentences}
    assert {"plain", "numbers", "questions", "names", "tongue_twisters", "punctuation", "long"} <= tags
    assert len(genres()) >= 30


def test_every_shipped_sentence_fills_to_a_valid_tts_request():
    rng = np.random.default_rng(1)
    for _, line in all_sentences():
        for _ in range(5 if "{" in line else 1):
            text = fill(rng, line)
            assert not LEFTOVER.search(text), text
            assert MIN_WORDS <= len(text.split()) <= MAX_WORDS, text
            TTSRequest(text=text, seed=0)


def test_every_shipped_description_fills_to_a_valid_music_request():
    rng = np.random.default_rng(2)
    for genre in genres():
        assert 40 <= genre.low_bpm < genre.high_bpm <= 220, genre.name
        for line in genre.descriptions:
            text = line.replace("{tempo}", f"{genre.low_bpm} bpm")
            text = re.sub(r"\{(\w+)\}", lambda m: {"key": "A minor", "mood": "calm"}.get(m.group(1), "piano"), text)
            MusicRequest(prompt=text, seconds=5.0, seed=0)
    assert len(all_descriptions()) == sum(len(g.descriptions) for g in genres())
    MusicRequest(prompt=make_music_prompt(rng), seconds=5.0)


def test_generated_tts_prompts_are_valid_filled_and_span_lengths(tts_prompts):
    for prompt in tts_prompts:
        request = TTSRequest(text=prompt.text, seed=0)
        assert request.text == prompt.text and len(prompt.text) <= MAX_TEXT_CHARS
        assert not LEFTOVER.search(prompt.text), prompt.text
        assert MIN_WORDS <= len(prompt.text.split()) <= MAX_WORDS
        assert prompt.spoken == normalise_for_wer(prompt.text)
        assert not re.search(r"\d", prompt.spoken), f"digits left in the WER reference: {prompt.spoken!r}"
        assert not re.search(r"\b[Aa] (?!one)[aeio]", prompt.text), prompt.text
    lengths = [len(p.text.split()) for p in tts_prompts]
    assert min(lengths) <= 8 and max(lengths) >= 30
    assert {p.difficulty for p in tts_prompts} == {tag for tag, _ in all_sentences()}
    assert any(re.search(r"\d", p.text) for p in tts_prompts) and any("%" in p.text for p in tts_prompts)


def test_max_words_bounds_prompts_for_short_reference_clips():
    rng = np.random.default_rng(3)
    assert all(len(make_tts_prompt(rng, max_words=12).text.split()) <= 12 for _ in range(300))


def test_generated_music_prompts_are_valid_and_carry_consistent_tempo(music_prompts):
    ranges = {g.name: (g.low_bpm, g.high_bpm) for g in genres()}
    for prompt in music_prompts:
        MusicRequest(prompt=prompt.text, seconds=8.0, seed=0)
        assert not LEFTOVER.search(prompt.text), prompt.text
        assert prompt.genre in ranges
        assert prompt.tempo_word in prompt.text or f"{prompt.bpm} bpm" in prompt.text
        if prompt.bpm is not None:
            low, high = ranges[prompt.genre]
            assert low <= prompt.bpm <= high and f"{prompt.bpm} bpm" in prompt.text
            assert tempo_word(prompt.bpm) == prompt.tempo_word
        assert stated_bpm(prompt.text) == prompt.bpm
    stated = sum(p.bpm is not None for p in music_prompts) / len(music_prompts)
    assert 0.6 < stated < 0.95
    assert {p.source for p in music_prompts} == {"description", "template"}
    assert len({p.genre for p in music_prompts}) == len(genres())


def test_same_seed_same_prompts_other_seed_other_prompts():
    def round_of(seed):
        rng = np.random.default_rng(seed)
        return [(make_sentence(rng), make_music_prompt(rng), make_seed(rng)) for _ in range(50)]

    assert round_of(7) == round_of(7)
    other = round_of(8)
    assert sum(a != b for a, b in zip(round_of(7), other)) == 50


def test_prompts_rarely_repeat(tts_prompts, music_prompts):
    # Measured over 10 000 draws: ~98% distinct for TTS, ~97% for music (see the README note).
    assert len({p.text for p in tts_prompts}) >= 0.95 * DRAWS
    assert len({p.text for p in music_prompts}) >= 0.95 * DRAWS
    assert len({p.template for p in tts_prompts}) >= 0.9 * len(all_sentences())


@pytest.mark.parametrize(
    "written, words",
    [
        ("$3.50", "three dollars fifty cents"),
        ("£1", "one pound"),
        ("€1,250,000", "one million two hundred fifty thousand euros"),
        ("at 7:05", "at seven oh five"),
        ("at 7:00", "at seven o'clock"),
        ("45%", "forty five percent"),
        ("the 21st", "the twenty first"),
        ("in 1987", "in nineteen eighty seven"),
        ("in 2005", "in two thousand five"),
        ("in 1900", "in nineteen hundred"),
        ("12,480 people", "twelve thousand four hundred eighty people"),
        ("3.14 metres", "three point one four metres"),
        ("Forty-two!", "forty two"),
    ],
)
def test_numbers_normalise_the_same_as_digits_or_words(written, words):
    assert normalise_for_wer(written) == normalise_for_wer(words)
    assert not re.search(r"\d", spoken_form(written))


def test_normalisation_keeps_accented_names_and_apostrophes():
    assert normalise_for_wer("Mr. O\u2019Brien met Ms. Bergström; “Stop!”") == "mr obrien met ms bergström stop"


def test_unknown_slot_or_stray_brace_is_a_clear_load_error():
    with pytest.raises(ConfigError, match="unknown slot"):
        check_slots("x.txt", ["{name} met {nobody}."], {"name"})
    with pytest.raises(ConfigError, match="stray brace"):
        check_slots("x.txt", ["{name} met {name."], {"name"})


def test_data_files_are_read_once_and_ship_in_the_wheel(tmp_path):
    assert read_sections("tts_sentences.txt") is read_sections("tts_sentences.txt")
    subprocess.run(
        [
            sys.executable,
            "setup.py",
            "-q",
            "egg_info",
            "-e",
            str(tmp_path),
            "build",
            "-b",
            str(tmp_path / "build"),
            "bdist_wheel",
            "-d",
            str(tmp_path / "dist"),
            "-b",
            str(tmp_path / "bd"),
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("tts_sentences.txt", "tts_slots.json", "music_descriptions.txt", "music_slots.json"):
        assert f"audionet/lib/prompts/data/{data}" in names
    assert not any(name.startswith(("lib/", "models/", "neurons/", "benchmarks/")) for name in names)  # namespaced
