import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.scoring.duplicates import DUPLICATE_CORRELATION, DuplicateFinder, fingerprint, similarity
from tests.speech import VOICE_B

TEXT = "Please call Marcus before five tomorrow; the meeting moved to the market."


def test_fingerprint_survives_gain_flip_resample_and_shift_but_not_other_speech(speech):
    clip = speech(TEXT)
    base = fingerprint(clip)
    flipped = clip.samples.copy()
    flipped[123] = -flipped[123]
    shifted = np.concatenate([np.zeros(400, np.float32), clip.samples])
    for copy in (
        Audio(clip.samples * 0.25, clip.sample_rate),
        Audio(flipped, clip.sample_rate),
        resample(clip, 16_000),
        resample(clip, 8_000),
        Audio(shifted, clip.sample_rate),
    ):
        assert similarity(base, fingerprint(copy)) > 0.98
    different = [
        speech("Please call Marcus before six tomorrow; the meeting moved to the harbour."),
        speech(TEXT, VOICE_B),
    ]
    for other in different:
        assert similarity(base, fingerprint(other)) < DUPLICATE_CORRELATION


def test_history_is_bounded_and_reports_the_earlier_label(speech):
    finder = DuplicateFinder(history_size=2)
    clips = [fingerprint(speech(t)) for t in ("One small step.", "A giant leap for all.", "Three little birds sang.")]
    assert finder.check_round("tts", ["a"], [clips[0]]) == [None]
    assert "earlier answer (a)" in finder.check_round("tts", ["b"], [clips[0]])[0]
    finder.check_round("tts", ["c", "d"], [clips[1], clips[2]])
    assert finder.check_round("tts", ["e"], [clips[0]]) == [None]  # forgotten: only 2 remembered
    assert len(finder.history["tts"]) == 2
