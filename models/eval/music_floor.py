"""What the music judges hear: the answer under a noise floor, so that a faint perturbation cannot buy them
(docs/scoring.md#judges-that-cannot-be-bought says why and what was measured).

basic-pitch, YAMNet and musicnn can each be driven by gradient ascent on the waveform. The music Judge's
`music_floor` analysis gives them the answer through a spectral gate instead (Hann windows of `N_FFT`, hop
`HOP`): each time-frequency bin of power p is scaled by r / (r + 1), r = p / floor, the floor `FLOOR_DB` below
the strongest bin of the clip's loud frames (the `LOUD_QUANTILE` of the frames' strongest bin powers). A bin
the music fills passes unchanged; a tone at L-inf 0.003 where nothing plays sits under the floor and reaches
the judges at least 10 dB lower. Music is loud where it plays, so little of it sits under the floor.

What the floor cannot stop is a perturbation inside loud music: basic-pitch then hears a held note struck
again, or a partial that goes on sounding start as a note. `key_rises` measures, per key and frame, how much the
key's energy rises there (`onset_rises`: at each note's onset); lib/scoring/music_content.struck counts a note
only where that energy rose by RISE_DB and reached the note floor (`NOTE_FLOOR_DB` under the loud frames), which
a perturbation 40 dB below the music cannot make. Nor can it tip basic-pitch into hearing an onset the signal
really has but the transcriber missed: so the onsets the Judge counts (`onsets_per_s`) are the signal's own,
the frames where several keys rise by `ONSET_KEY_DB` together, not the transcriber's.

Deterministic and differentiable where it matters (`floored`, torch): the attack study's attacker
differentiates through it (benchmarks/attacks/measures.py); the Judge runs the same function (`floored_audio`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio

N_FFT, HOP = 2048, 512
FLOOR_DB = 30.0  # a bin this far below the loud frames' strongest bin is halved in amplitude (-6 dB)
LOUD_QUANTILE = 0.9  # the loud frames: this quantile of the frames' strongest bin powers
ORDER = 1.0  # the gate's steepness: a bin at r x the floor is scaled by r^ORDER / (r^ORDER + 1)


def floored(samples):
    """The gated samples: a torch tensor (samples,) -> (samples,), differentiable."""
    import torch

    length = samples.shape[-1]
    padded = torch.nn.functional.pad(samples, (0, max(0, N_FFT + 1 - length)))
    window = torch.hann_window(N_FFT, dtype=samples.dtype)
    spectrum = torch.stft(padded, N_FFT, HOP, window=window, return_complex=True)
    power = spectrum.real**2 + spectrum.imag**2
    loud = torch.quantile(power.amax(dim=0), LOUD_QUANTILE).clamp_min(1e-12)
    floor = loud * 10 ** (-FLOOR_DB / 10)
    ratio = (power / floor) ** ORDER
    gated = spectrum * (ratio / (ratio + 1))
    return torch.istft(gated, N_FFT, HOP, window=window, length=padded.shape[-1])[:length]


def floored_audio(audio: Audio) -> Audio:
    """`floored` on an Audio (no gradient): what the music judges are given."""
    import torch

    with torch.no_grad():
        samples = floored(torch.from_numpy(np.asarray(audio.samples, dtype=np.float32)))
    return Audio(samples.numpy(), audio.sample_rate)


RISE_WINDOW_S = 0.06  # a note's energy before its onset (the lowest frame) and after it (the highest frame)
RISE_DB = 1.5  # a note is struck (lib/scoring/music_content.struck) where its key's energy rose by this at the onset
NOTE_FLOOR_DB = 30.0  # and reaches at most this far below the loud frames' strongest bin


def key_rises(samples, rate: int):
    """(88 piano keys from MIDI 21, STFT frames of `HOP`) how much the energy within a semitone of each key rises
    at each frame, in dB: the highest frame in the `RISE_WINDOW_S` after it over the lowest in the one before,
    at most `RISE_DB` less how far that highest frame sits below `NOTE_FLOOR_DB` under the loud frames. A key
    struck rises by several dB; a perturbation 40 dB below a sounding note moves it by a tenth of one, and one
    where nothing sounds stays under the note floor.
    Torch, differentiable (the attacker's port reads it as the Judge does)."""
    import torch

    samples = torch.nn.functional.pad(samples, (0, max(0, N_FFT + 1 - samples.shape[-1])))
    spectrum = torch.stft(
        samples, N_FFT, HOP, window=torch.hann_window(N_FFT, dtype=samples.dtype), return_complex=True
    )
    power = spectrum.real**2 + spectrum.imag**2  # (bins, frames)
    frequencies = np.fft.rfftfreq(N_FFT, 1 / rate)
    centres = 440.0 * 2 ** ((np.arange(21, 109)[:, None] - 69) / 12)
    bands = np.abs(np.log2(np.maximum(frequencies, 1e-3) / centres)) <= 1 / 24
    bands[np.arange(88), np.argmin(np.abs(frequencies - centres), axis=1)] = True  # at least the nearest bin
    energy = torch.from_numpy(bands.astype(np.float32)).to(power.dtype) @ power + 1e-12  # (88, frames)
    reach = max(1, round(RISE_WINDOW_S * rate / HOP))
    after = torch.nn.functional.pad(energy, (0, reach)).unfold(1, reach + 1, 1).amax(dim=2)
    before = torch.nn.functional.pad(energy, (reach, 0), value=float("inf")).unfold(1, reach + 1, 1).amin(dim=2)
    # a key below the note floor is no note struck, however it rises: capped at RISE_DB less how far below it is
    floor = torch.quantile(power.amax(dim=0), LOUD_QUANTILE).clamp_min(1e-12) * 10 ** (-NOTE_FLOOR_DB / 10)
    return torch.minimum(10 * torch.log10(after / before), RISE_DB + 10 * torch.log10(after / floor))


def onset_rises(audio: Audio, onsets: Sequence[tuple[int, float]]) -> list[float]:
    """For each (MIDI pitch 21-108, onset second): `key_rises` of that key at the onset's frame."""
    import torch

    with torch.no_grad():
        rises = key_rises(torch.from_numpy(np.asarray(audio.samples, dtype=np.float32)), audio.sample_rate).numpy()
    frame_s = HOP / audio.sample_rate
    return [float(rises[pitch - 21, min(rises.shape[1] - 1, round(onset_s / frame_s))]) for pitch, onset_s in onsets]


ONSET_KEY_DB = 9.0  # a key struck at an onset rises this much; a perturbation 40 dB under it moves it ~1 dB
ONSET_DB = 36.0  # an onset: the rises of the keys struck there sum to this (four keys at 9 dB, two at 18)
ONSET_GAP_S = RISE_WINDOW_S  # onsets closer than this are one (a rolled chord, a strum)


def onset_strength(rises):
    """(frames,) the summed `key_rises` of the keys that rose by `ONSET_KEY_DB` at each frame (torch)."""
    import torch

    return torch.where(rises >= ONSET_KEY_DB, rises, torch.zeros_like(rises)).sum(dim=0)


def onset_peaks(strength, rate: int):
    """(frames,) bool: where an onset is, the frames whose `onset_strength` reaches `ONSET_DB` and is the highest
    within `ONSET_GAP_S` either side (the first of equal ones). Torch in, torch out (no gradient: a mask)."""
    import torch

    reach = max(1, round(ONSET_GAP_S * rate / HOP))
    strength = strength.detach()
    highest = torch.nn.functional.max_pool1d(strength[None, None], 2 * reach + 1, 1, reach)[0, 0]
    earlier = torch.nn.functional.pad(strength, (1, 0), value=-1.0)[:-1]
    return (strength >= ONSET_DB) & (strength >= highest) & (strength > earlier)


def onsets_per_s(audio: Audio) -> float:
    """How many onsets a second the signal itself has (`onset_peaks`): what the music Judge counts."""
    import torch

    with torch.no_grad():
        rises = key_rises(torch.from_numpy(np.asarray(audio.samples, dtype=np.float32)), audio.sample_rate)
        count = int(onset_peaks(onset_strength(rises), audio.sample_rate).sum())
    return count / max(audio.seconds, 1e-9)
