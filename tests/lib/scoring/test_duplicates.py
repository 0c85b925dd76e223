import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.scoring.duplicates import DUPLICATE_CORRELATION, DuplicateFinder, fingerprint, is_copy, similarity
from audionet.lib.scoring.prints import PrintSet
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


def copies_of(clip: Audio, rng) -> list[Audio]:
    """What a copier might send: the clip at another gain, resampled, late, trimmed, padded, noisy."""
    x, rate = clip.samples, clip.sample_rate
    level = float(np.sqrt(np.mean(x**2)))
    return [
        Audio(x * 0.4, rate),
        resample(clip, 8_000),
        resample(clip, 16_000),
        Audio(np.concatenate([np.zeros(int(0.06 * rate), np.float32), x]), rate),
        Audio(x[int(0.08 * len(x)) :], rate),
        Audio(np.concatenate([x, np.zeros(int(0.08 * len(x)), np.float32)]), rate),
        Audio(x + 0.1 * level * rng.standard_normal(len(x)).astype(np.float32), rate),
    ]


def test_a_whole_set_is_searched_with_the_pairwise_verdicts(speech):
    """PrintSet.copies decides every member as `is_copy` does, copies and near misses included: its bounds
    never drop a pair the full correlation would call a copy."""
    rng = np.random.default_rng(7)
    clips = [speech(TEXT), speech(TEXT, VOICE_B), speech("Three little birds sang by the open window today.")]
    prints = [fingerprint(c) for clip in clips for c in [clip, *copies_of(clip, rng)]]
    # Near the threshold: a member blurred by noise of growing strength, down to a stranger.
    prints += [prints[0] + rng.normal(0.0, level, prints[0].shape) for level in (0.2, 0.3, 0.35, 0.4, 0.5, 0.8)]
    members = PrintSet([str(n) for n in range(len(prints))], prints)
    verdicts = {True: 0, False: 0}
    for query in prints:
        expected = [n for n, other in enumerate(prints) if is_copy(query, other)]
        assert members.copies(query, limit=len(prints)) == expected
        for n in range(len(prints)):
            verdicts[n in expected] += 1
    assert verdicts[True] > 3 * len(prints) and verdicts[False] > 3 * len(prints)  # both kinds were decided


def test_within_a_round_both_answers_of_a_copied_pair_lose_whatever_arrives_first(speech):
    finder = DuplicateFinder()
    clip = speech(TEXT)
    prints = [
        fingerprint(clip),
        fingerprint(speech(TEXT, VOICE_B)),
        fingerprint(Audio(clip.samples * 0.5, clip.sample_rate)),
    ]
    reasons = finder.check_round("tts", ["a", "b", "c"], prints)
    assert reasons[1] is None and "c" in reasons[0] and "a" in reasons[2] and "this round" in reasons[2]


def test_the_history_is_saved_and_a_replay_after_a_restart_is_caught(speech, tmp_path):
    path = str(tmp_path / "duplicates.npz")
    before = DuplicateFinder(history_size=3)
    clips = [speech(t) for t in ("One small step.", "A giant leap for all.", "Three little birds sang.", TEXT)]
    for n, clip in enumerate(clips):
        before.check_round("tts", [f"uid {n}"], [fingerprint(clip)])
    before.save(path)
    after = DuplicateFinder(history_size=2)  # a smaller bound keeps the newest
    after.load(path)
    assert after.history["tts"].labels == ["uid 2", "uid 3"]
    replayed = Audio(clips[3].samples * 0.8, clips[3].sample_rate)
    assert "earlier answer (uid 3)" in after.check_round("tts", ["uid 9"], [fingerprint(replayed)])[0]
    assert after.check_round("tts", ["uid 9"], [fingerprint(clips[0])]) == [None]  # beyond the bound: forgotten
