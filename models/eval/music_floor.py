"""What the music judges hear: the answer under a noise floor, so that a faint perturbation cannot buy them
(docs/scoring.md#judges-that-cannot-be-bought says why and what was measured).

basic-pitch, YAMNet and musicnn can each be driven by gradient ascent on the waveform. The music Judge's
`music_floor` analysis gives them the answer through a spectral gate instead (Hann windows of `N_FFT`, hop
`HOP`): each time-frequency bin of power p is scaled by r / (r + 1), r = p / floor, the floor `FLOOR_DB` below
the strongest bin of the clip's loud frames (the `LOUD_QUANTILE` of the frames' strongest bin powers). A bin
the music fills passes unchanged; a tone at L-inf 0.003 where nothing plays sits under the floor and reaches
the judges at least 10 dB lower. Music is loud where it plays, so little of it sits under the floor.

What the floor cannot stop is a perturbation inside a loud note: basic-pitch then hears the held note struck
again (a new onset, a new note, more notes per second). `onset_rises` measures, per note, how much its key's
energy rose at its onset; lib/scoring/music_content.held_once counts a note re-struck while it still sounds as
the same note unless that energy rose by RISE_DB, which a perturbation 40 dB below the note cannot do.

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


def onset_rises(audio: Audio, onsets: Sequence[tuple[int, float]]) -> list[float]:
    """For each (MIDI pitch, onset second): how much the energy within a semitone of the pitch rises at the
    onset, in dB (the highest frame in the `RISE_WINDOW_S` after it over the lowest in the one before). A
    key struck again rises by several dB; a perturbation 40 dB below a held note moves it by a tenth of one."""
    import torch

    samples = torch.from_numpy(np.asarray(audio.samples, dtype=np.float32))
    samples = torch.nn.functional.pad(samples, (0, max(0, N_FFT + 1 - samples.shape[-1])))
    with torch.no_grad():
        spectrum = torch.stft(samples, N_FFT, HOP, window=torch.hann_window(N_FFT), return_complex=True)
    power = (spectrum.abs() ** 2).numpy()  # (bins, frames)
    frequencies = np.fft.rfftfreq(N_FFT, 1 / audio.sample_rate)
    frame_s, reach = HOP / audio.sample_rate, max(1, round(RISE_WINDOW_S * audio.sample_rate / HOP))
    rises = []
    for pitch, onset_s in onsets:
        centre = 440.0 * 2 ** ((pitch - 69) / 12)
        band = np.abs(np.log2(np.maximum(frequencies, 1e-3) / centre)) <= 1 / 24
        band[int(np.argmin(np.abs(frequencies - centre)))] = True  # at least the nearest bin (low notes)
        energy = power[band].sum(axis=0) + 1e-12
        at = min(len(energy) - 1, round(onset_s / frame_s))
        before, after = energy[max(0, at - reach) : at + 1], energy[at : at + reach + 1]
        rises.append(float(10 * np.log10(after.max() / before.min())))
    return rises
