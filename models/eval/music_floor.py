"""What the music judges hear: the answer under a noise floor, so that a faint perturbation cannot buy them
(docs/scoring.md#judges-that-cannot-be-bought says why and what was measured).

basic-pitch, YAMNet and musicnn can each be driven by gradient ascent on the waveform. The music Judge's
`music_floor` analysis gives them the answer through a spectral gate instead (Hann windows of `N_FFT`, hop
`HOP`): each time-frequency bin of power p is scaled by r / (r + 1), r = p / floor, the floor `FLOOR_DB` below
the strongest bin of the clip's loud frames (the `LOUD_QUANTILE` of the frames' strongest bin powers). A bin
the music fills passes unchanged; a tone at L-inf 0.003 where nothing plays sits under the floor and reaches
the judges at least 10 dB lower. Music is loud where it plays, so little of it sits under the floor.

What the floor cannot stop is a perturbation inside loud music: basic-pitch then hears a held note struck
again, a partial that goes on sounding start as a note, an onset the signal has but it missed, or notes held
longer. So the Judge reads no notes: the onsets it counts (`onsets_per_s`) are the signal's own, the frames where
several keys' energy rises together (`key_rises`: by `ONSET_KEY_DB` and more, from at most `RISE_DB` under the
note floor, `NOTE_FLOOR_DB` under the loud frames, which a perturbation 40 dB below the music cannot reach), and
the key it reads comes from the share of the signal's amplitude in each pitch class (`pitch_classes`).

Deterministic and differentiable where it matters (`floored`, torch): the attack study's attacker
differentiates through it (benchmarks/attacks/measures.py); the Judge runs the same function (`floored_audio`).
"""

from __future__ import annotations

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
RISE_DB = 1.5  # the most a key's rise counts where its energy only reaches the note floor (less below it)
NOTE_FLOOR_DB = 30.0  # the note floor: this far below the loud frames' strongest bin


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


ONSET_KEY_DB = 9.0  # a key struck at an onset rises this much; a perturbation 40 dB under it moves it ~1 dB
ONSET_DB = 36.0  # an onset: the rises of the keys struck there sum to this (four keys at 9 dB, two at 18)
ONSET_GAP_S = RISE_WINDOW_S  # onsets closer than this are one (a rolled chord, a strum)


def onset_strength(rises):
    """(frames,) the summed `key_rises` of the keys that rose by `ONSET_KEY_DB` at each frame (torch)."""
    import torch

    return torch.where(rises >= ONSET_KEY_DB, rises, torch.zeros_like(rises)).sum(dim=0)


def highest_around(strength, rate: int):
    """(frames,) bool: the frames whose `strength` is the highest within `ONSET_GAP_S` either side (torch, no
    gradient: a mask)."""
    import torch

    reach = max(1, round(ONSET_GAP_S * rate / HOP))
    strength = strength.detach()
    return strength >= torch.nn.functional.max_pool1d(strength[None, None], 2 * reach + 1, 1, reach)[0, 0]


def onset_count(rises, rate: int) -> int:
    """How many onsets `key_rises` holds: the frames whose `onset_strength` reaches `ONSET_DB` and is the highest
    within `ONSET_GAP_S` either side (the first of equal ones)."""
    import torch

    strength = onset_strength(rises.detach())
    earlier = torch.nn.functional.pad(strength, (1, 0), value=-1.0)[:-1]
    return int(((strength >= ONSET_DB) & highest_around(strength, rate) & (strength > earlier)).sum())


def onsets_per_s(audio: Audio) -> float:
    """How many onsets a second the signal itself has (`onset_count`): what the music Judge counts."""
    import torch

    with torch.no_grad():
        rises = key_rises(torch.from_numpy(np.asarray(audio.samples, dtype=np.float32)), audio.sample_rate)
    return onset_count(rises, audio.sample_rate) / max(audio.seconds, 1e-9)


PITCH_WINDOW_S = 0.17  # long enough to tell semitones apart at the lowest pitch read (6 Hz bins at 48 kHz)
PITCH_RANGE_HZ = (80.0, 5000.0)  # fundamentals and the first partials; above, partials blur the classes


def pitch_classes(samples, rate: int):
    """(12,) torch: the share of the spectrum's amplitude (summed over frames) in each pitch class, C first, over
    `PITCH_RANGE_HZ`, each STFT bin in the class of its nearest semitone: the key profile the Judge reads
    (lib/scoring/music_content.estimate_key). Differentiable (the attacker's port reads it as the Judge does)."""
    import torch

    n_fft = 1 << int(np.ceil(np.log2(rate * PITCH_WINDOW_S)))
    samples = torch.nn.functional.pad(samples, (0, max(0, n_fft + 1 - samples.shape[-1])))
    window = torch.hann_window(n_fft, dtype=samples.dtype)
    spectrum = torch.stft(samples, n_fft, n_fft // 4, window=window, return_complex=True)
    amplitude = (spectrum.real**2 + spectrum.imag**2 + 1e-20).sqrt().sum(dim=1)  # (bins,)
    frequencies = np.fft.rfftfreq(n_fft, 1 / rate)
    inside = np.flatnonzero((frequencies >= PITCH_RANGE_HZ[0]) & (frequencies <= PITCH_RANGE_HZ[1]))
    classes = np.round(69 + 12 * np.log2(frequencies[inside] / 440.0)).astype(int) % 12
    membership = torch.zeros(12, len(frequencies), dtype=samples.dtype)
    membership[torch.from_numpy(classes), torch.from_numpy(inside)] = 1.0
    histogram = membership @ amplitude
    return histogram / histogram.sum().clamp_min(1e-12)


def pitch_class_shares(audio: Audio) -> np.ndarray:
    """`pitch_classes` of an Audio (no gradient), as numpy."""
    import torch

    with torch.no_grad():
        samples = torch.from_numpy(np.asarray(audio.samples, dtype=np.float32))
        return pitch_classes(samples, audio.sample_rate).double().numpy()
