"""basic-pitch's ONNX model transcribes known harmony: a chord progression gives its chord tones, a sine
its pitch, noise and silence nothing; awkward clips give well-formed (possibly empty) note lists."""

import numpy as np
import pytest

from audionet.benchmarks.common.labelled_music import PROGRESSION, excerpt, labelled_tracks, progression
from audionet.lib.core.audio import Audio
from audionet.models.eval.basic_pitch import HOP, SAMPLE_RATE, WINDOW, BasicPitch, join, windows
from tests.clips import awkward, long_noise


@pytest.fixture(scope="module")
def transcriber():
    return BasicPitch()


def weights_by_pitch_class(notes, start: float, end: float) -> np.ndarray:
    weights = np.zeros(12)
    for n in notes:
        weights[n.pitch % 12] += max(0.0, min(n.offset_s, end) - max(n.onset_s, start)) * n.confidence
    return weights


def test_a_chord_progression_gives_its_chord_tones(transcriber):
    (notes,) = transcriber.notes([progression(chord_s=1.0, repeats=2)])
    assert {n.pitch for n in notes} >= {p for chord in PROGRESSION for p in chord}
    for i, chord in enumerate(PROGRESSION * 2):
        weights = weights_by_pitch_class(notes, i + 0.1, i + 0.9)
        assert set(np.argsort(weights)[-3:]) == {p % 12 for p in chord}, (i, weights.round(2))
        starts = [n.onset_s for n in notes if n.pitch in chord and abs(n.onset_s - i) < 0.5]
        assert starts and max(abs(s - i) for s in starts) < 0.05  # onsets on the chord change


def test_a_sine_is_one_long_note_and_noise_and_silence_none(transcriber):
    t = np.arange(3 * SAMPLE_RATE) / SAMPLE_RATE
    sine, noise, silence = transcriber.notes(
        [
            Audio(0.5 * np.sin(2 * np.pi * 440 * t), SAMPLE_RATE),
            Audio(0.1 * np.random.default_rng(0).standard_normal(3 * SAMPLE_RATE), SAMPLE_RATE),
            Audio(np.zeros(3 * SAMPLE_RATE), SAMPLE_RATE),
        ]
    )
    assert [n.pitch for n in sine] == [69] and sine[0].offset_s - sine[0].onset_s > 2.5
    assert noise == [] and silence == []


def test_real_music_has_notes(transcriber):
    for track in labelled_tracks()[::9]:
        (notes,) = transcriber.notes([excerpt(track, 8.0, 6.0)])
        assert len(notes) / 6.0 > 1.0 and len({n.pitch % 12 for n in notes}) >= 5, track.name


def test_windows_join_into_one_frame_per_hop():
    for seconds in (0.0, 1.0, 2.0, 7.3):
        samples = np.zeros(int(seconds * SAMPLE_RATE), np.float32)
        cut = windows(samples)
        assert cut.shape[1:] == (WINDOW, 1)
        joined = join(np.zeros((len(cut), 172, 88), np.float32), len(samples))
        assert joined.shape == (len(samples) * (SAMPLE_RATE // HOP) // SAMPLE_RATE, 88)  # ~86 frames a second


def test_awkward_clips_give_well_formed_notes(transcriber):
    for notes in transcriber.notes([*awkward().values(), long_noise()]):
        for n in notes:
            assert 21 <= n.pitch <= 108 and 0 <= n.onset_s < n.offset_s and 0 <= n.confidence <= 1
    assert transcriber.notes([]) == []
