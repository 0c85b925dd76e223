import numpy as np

from audionet.benchmarks.common.labelled_music import excerpt, labelled_tracks
from audionet.lib.core.audio import Audio
from audionet.lib.scoring.analyses import repetition
from audionet.models.baselines.looped import one_second_looped
from audionet.models.baselines.synth import ProceduralMusicGenerator

RATE = 32_000


def test_a_loop_is_a_loop_even_when_its_second_holds_a_pause():
    # The stop-56 CI failure: localnet's "1 s loop" cheat looped a second of the synth that ended in silence,
    # and, silent frames counting as frames that do not recur, its repetition read 0.76: under the penalty.
    rng = np.random.default_rng(0)
    t = np.arange(int(0.55 * RATE)) / RATE
    sound = (0.3 * np.sin(2 * np.pi * 220 * t) * np.exp(-4 * t) + 0.02 * rng.normal(size=len(t))).astype(np.float32)
    second = np.concatenate([sound, np.zeros(RATE - len(sound), np.float32)])
    looped = Audio(np.tile(second, 9), RATE)
    assert repetition(looped) >= 0.98
    for seed in range(4):
        honest = ProceduralMusicGenerator().generate("west african kora melody with gentle hand drums", 8.0, seed=seed)
        assert repetition(one_second_looped(honest)) >= 0.97
    # Music that does not repeat itself exactly stays far from it, pauses or not
    track = excerpt(labelled_tracks()[0], 6.0, 8.0)
    gapped = track.samples.copy()
    gapped[track.sample_rate // 2 : track.sample_rate] = 0.0  # half a second of silence
    assert repetition(track) < 0.1 and repetition(Audio(gapped, track.sample_rate)) < 0.1
