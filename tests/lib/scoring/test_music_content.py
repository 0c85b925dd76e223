"""Pure music-content measures on notes: keys from pitch classes, key stability, chords, prompt keys; and
on real transcriptions of a known progression and of the labelled neural tracks."""

import numpy as np
import pytest

from audionet.benchmarks.common.labelled_music import PROGRESSION, excerpt, labelled_tracks, progression
from audionet.lib.scoring.music_content import (
    Key,
    chord_measures,
    estimate_key,
    fifths_apart,
    key_fit,
    key_match,
    key_stability,
    parse_key,
    pitch_class_histogram,
    summary,
)
from audionet.models.eval.base import Note

C_MAJOR_SCALE = (60, 62, 64, 65, 67, 69, 71, 72)


def chords(roots_and_modes, seconds: float = 1.0) -> list[Note]:
    """Block triads, one per `seconds`."""
    notes = []
    for i, (root, mode) in enumerate(roots_and_modes):
        third = 4 if mode == "major" else 3
        notes += [Note(root + step, i * seconds, (i + 1) * seconds, 0.8) for step in (0, third, 7)]
    return notes


def test_histogram_weighs_by_duration_and_confidence_inside_the_window():
    notes = [Note(60, 0.0, 2.0, 1.0), Note(67, 1.0, 2.0, 0.5), Note(61, 0.0, 0.1, 0.1)]
    histogram = pitch_class_histogram(notes)
    assert histogram.sum() == pytest.approx(1.0) and histogram[0] > histogram[7] > histogram[1] > 0
    assert pitch_class_histogram(notes, 1.5, 3.0)[1] == 0.0
    assert not pitch_class_histogram([]).any() and not pitch_class_histogram(notes, 5.0, 6.0).any()


def test_scales_and_progressions_find_their_key():
    scale = [Note(p, i * 0.5, (i + 1) * 0.5, 0.9) for i, p in enumerate(C_MAJOR_SCALE * 2)]
    assert estimate_key(pitch_class_histogram(scale))[0] == Key(0, "major")
    a_minor = chords([(57, "minor"), (62, "minor"), (64, "major"), (57, "minor")])
    key, clarity = estimate_key(pitch_class_histogram(a_minor))
    assert key == Key(9, "minor") and clarity > 0.5
    for shift in range(12):  # transposing the notes transposes the key
        moved = [n._replace(pitch=n.pitch + shift) for n in a_minor]
        assert estimate_key(pitch_class_histogram(moved))[0] == Key((9 + shift) % 12, "minor")
    assert estimate_key(pitch_class_histogram([])) == (None, 0.0)


def test_a_piece_keeps_its_key_and_random_chords_do_not():
    rng = np.random.default_rng(5)
    diatonic = chords([(60, "major"), (57, "minor"), (53, "major"), (55, "major")] * 4)
    random = chords([(int(r), "major") for r in rng.integers(48, 60, 16)])
    assert key_stability(diatonic, 16.0) == 1.0 > key_stability(random, 16.0) + 0.3
    assert key_stability([], 16.0) == 0.0
    held = chord_measures(chords([(60, "major")] * 16), 16.0)
    moving = chord_measures(diatonic, 16.0)
    assert held["chord_changes_per_min"] == 0.0 < moving["chord_changes_per_min"]
    assert held["triad_share"] == pytest.approx(1.0) and moving["triad_share"] == pytest.approx(1.0)
    cluster = chord_measures([Note(p, 0.0, 4.0, 1.0) for p in range(60, 72)], 4.0)  # all 12 pitch classes
    assert cluster["triad_share"] == pytest.approx(0.25)


def test_prompt_keys_parse_and_match_by_distance_on_the_circle_of_fifths():
    assert parse_key("lo-fi beat in B flat major, 80 bpm") == Key(10, "major")
    assert parse_key("F sharp minor") == parse_key("F# minor") == Key(6, "minor")
    assert parse_key("Eb maj") == Key(3, "major") and parse_key("a minor waltz") == Key(9, "minor")
    assert parse_key("calm piano, 80 bpm") is None
    c, a_minor, g, d, f_sharp = Key(0, "major"), Key(9, "minor"), Key(7, "major"), Key(2, "major"), Key(6, "major")
    assert fifths_apart(c, a_minor) == 0 and fifths_apart(c, f_sharp) == 6
    assert key_match(c, c) == 1.0 > key_match(c, a_minor) > key_match(c, g) > key_match(c, d) > key_match(c, f_sharp)
    assert key_match(c, None) == 0.0 == key_match(c, Key(0, "minor"))  # parallel minor: 3 flats away


def test_summary_of_nothing_is_finite():
    values = summary([], 0.0)
    assert all(np.isfinite(v) for v in values.values()) and values["notes"] == 0 and values["key_tonic"] == -1


@pytest.fixture(scope="module")
def transcriber():
    from audionet.models.eval.basic_pitch import BasicPitch

    return BasicPitch()


def test_a_transcribed_progression_is_in_c_major_with_a_chord_a_second(transcriber):
    (notes,) = transcriber.notes([progression(chord_s=1.0, repeats=2)])
    found = summary(notes, 8.0)
    assert (found["key_tonic"], found["key_minor"]) == (0.0, 0.0) and found["key_stability"] == 1.0
    assert found["triad_share"] > 0.8 and 40 <= found["chord_changes_per_min"] <= 60  # 7 changes in 8 s
    assert {p % 12 for chord in PROGRESSION for p in chord} <= {n.pitch % 12 for n in notes}


def test_the_stated_key_of_real_tracks_fits_better_than_a_distant_one(transcriber):
    """The labelled neural tracks: the key their prompt asked for fits their notes better than the key
    six fifths away (its tritone), on every one of 6 tracks."""
    for track in labelled_tracks()[::5]:
        (notes,) = transcriber.notes([excerpt(track, 8.0, 8.0)])
        histogram = pitch_class_histogram(notes)
        stated = parse_key(track.key)
        assert stated is not None
        distant = Key((stated.tonic + 6) % 12, stated.mode)
        assert key_fit(histogram, stated) > key_fit(histogram, distant) + 0.3, track.name
