"""What the music judges hear (the defended music Judge): the noise floor passes music and suppresses a faint
tone where nothing plays; the energy rise at an onset tells a key struck again from a held note moved by a
faint perturbation; the onsets the Judge counts are where several keys rise together, a rolled chord one, and a
faint perturbation on held notes adds none; the key read from the signal's pitch classes. How far attacks move
the judges through it: benchmarks/attacks (measured, not tested)."""

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.models.eval.music_floor import (
    HOP,
    NOTE_FLOOR_DB,
    ONSET_KEY_DB,
    RISE_DB,
    floored_audio,
    key_rises,
    onsets_per_s,
    pitch_class_shares,
)

RATE = 32_000


def tone(hz: float, seconds: float, amplitude: float, start_s: float = 0.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * hz * (t + start_s))).astype(np.float32)


def chord(seconds: float = 3.0) -> np.ndarray:
    return sum(tone(hz, seconds, 0.2) for hz in (261.63, 329.63, 392.0))


def rises_at(samples: np.ndarray, keys: list[tuple[int, float]]) -> list[float]:
    """`key_rises` of each (MIDI pitch, second)."""
    import torch

    rises = key_rises(torch.from_numpy(samples), RATE).numpy()
    return [float(rises[pitch - 21, round(second * RATE / HOP)]) for pitch, second in keys]


def energy_db(samples: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(samples.astype(np.float64) ** 2) + 1e-20))


def test_the_floor_passes_music_and_suppresses_a_faint_tone_where_nothing_plays():
    music = chord()
    heard = floored_audio(Audio(music, RATE)).samples
    assert energy_db(heard - music) < energy_db(music) - 30  # the music passes (error 30 dB down)
    faint = tone(1760.0, 3.0, 0.003)  # 36 dB below each chord tone, at L-inf 0.003, in an empty band
    moved = floored_audio(Audio(music + faint, RATE)).samples - heard
    assert energy_db(moved) < energy_db(faint) - 10  # what reaches the judges is 10 dB lower or less
    quiet = floored_audio(Audio(music * 0.05 + faint * 0.05, RATE)).samples
    assert energy_db(quiet - heard * 0.05) < energy_db(faint * 0.05) - 10  # the floor follows the music's level


def test_a_key_struck_again_rises_and_a_held_note_under_a_faint_perturbation_does_not():
    held = chord()
    struck = held.copy()
    struck[int(1.0 * RATE) : int(1.5 * RATE)] *= 0.1  # the chord released at 1 s and struck again at 1.5 s
    noise = np.random.default_rng(0).choice([-0.003, 0.003], size=len(held)).astype(np.float32)
    onsets = [(60, 1.5), (64, 1.5), (67, 1.5)]
    assert min(rises_at(struck, onsets)) > ONSET_KEY_DB
    assert max(rises_at(held + noise, onsets)) < RISE_DB / 3


def test_a_faint_tone_starting_where_nothing_plays_is_under_the_note_floor():
    """A 0.003 tone (L-inf 0.003) starting at 1.5 s on a key the chord leaves empty rises from nothing, yet sits
    more than NOTE_FLOOR_DB under the chord: its rise counts for nothing; the same tone at the chord's level is
    struck."""
    for amplitude, struck in ((0.003, False), (0.2, True)):
        started = np.concatenate([np.zeros(int(1.5 * RATE), np.float32), tone(880.0, 1.5, amplitude)])
        (rise,) = rises_at(chord() + started, [(81, 1.5)])
        assert (rise >= RISE_DB) is struck, (amplitude, rise, NOTE_FLOOR_DB)


def test_onsets_are_where_keys_rise_together_a_rolled_chord_one_and_a_faint_perturbation_adds_none():
    seconds, hz = 4.0, (261.63, 329.63, 392.0, 523.25)
    decay = np.exp(-3.0 * (np.arange(int(seconds * RATE)) / RATE))
    strikes = np.zeros(int(seconds * RATE), np.float32)
    for start in (0.5, 1.5, 2.5):  # a chord struck three times, its notes 20 ms apart (rolled)
        for n, f in enumerate(hz):
            at = int((start + 0.02 * n) * RATE)
            strikes[at:] += (tone(f, seconds, 0.15) * decay)[: len(strikes) - at]
    assert onsets_per_s(Audio(strikes, RATE)) * seconds == 3
    held = sum(tone(f, seconds, 0.15) for f in hz)
    noise = np.random.default_rng(0).choice([-0.003, 0.003], size=len(held)).astype(np.float32)
    # held from the first sample to the last: the clip's own edges are all it starts and stops at
    assert onsets_per_s(Audio(held + noise, RATE)) == onsets_per_s(Audio(held, RATE)) <= 2 / seconds
    assert onsets_per_s(Audio(np.zeros(int(seconds * RATE), np.float32), RATE)) == 0


def test_the_key_read_from_the_signal_is_the_chords_and_a_faint_perturbation_barely_moves_it():
    from audionet.lib.scoring.music_content import Key, estimate_key, key_fit

    c_major = chord()  # C E G
    classes = pitch_class_shares(Audio(c_major, RATE))
    key, clarity = estimate_key(classes)
    assert key == Key(0, "major") and clarity > 0.75
    assert key_fit(classes, Key(0, "major")) > key_fit(classes, Key(6, "major")) + 1.0  # six fifths away
    noise = np.random.default_rng(0).choice([-0.003, 0.003], size=len(c_major)).astype(np.float32)
    moved = pitch_class_shares(floored_audio(Audio(c_major + noise, RATE)))
    assert np.abs(moved - classes).max() < 0.01
