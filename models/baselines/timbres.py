"""Instrument timbres for the procedural music baseline (`synth.py`).

Each timbre maps (frequency Hz, held seconds, rng) to float64 samples at
SAMPLE_RATE, including its release tail; all of them are vectorised numpy
(additive, FM, Karplus-Strong, filtered noise), cheap enough that 30 s of
music renders in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.signal import butter, lfilter

__all__ = ["DRUMS", "SAMPLE_RATE", "TIMBRES", "drum_hit"]

SAMPLE_RATE = 32_000
SR = SAMPLE_RATE


def _env(n: int, attack: float, release_at: int, release: float) -> np.ndarray:
    """Linear attack, then a linear release starting at sample `release_at`."""
    i = np.arange(n)
    up = np.minimum(i / max(attack * SR, 1.0), 1.0)
    down = np.clip(1.0 - (i - release_at) / max(release * SR, 1.0), 0.0, 1.0)
    return up * down


def _additive(freq: float, n: int, amps: list[float], decay=(0.0, 0.0), vibrato: float = 0.0) -> np.ndarray:
    """Sum of harmonics k*freq with amplitude amps[k-1] * exp(-(d0 + d1*k) t).

    One sin and one cos per note: sin(k x) follows from the recurrence
    sin(k x) = 2 cos(x) sin((k-1) x) - sin((k-2) x), far cheaper than k sins.
    """
    t = np.arange(n) / SR
    phase = 2 * np.pi * freq * (t + vibrato * np.sin(2 * np.pi * 5.0 * t) / (2 * np.pi * 5.0))
    below_nyquist = int(min(len(amps), SR * 0.45 // freq))  # no aliased partials
    sin_prev, sin_k, two_cos = np.zeros(n), np.sin(phase), 2 * np.cos(phase)
    env = np.exp(-(decay[0] + decay[1]) * t) if any(decay) else 1.0
    step = np.exp(-decay[1] * t) if decay[1] else 1.0
    out = np.zeros(n)
    for k in range(below_nyquist):
        out += amps[k] * env * sin_k
        sin_prev, sin_k = sin_k, two_cos * sin_k - sin_prev
        env = env * step
    return out


def _piano(f, dur, rng):
    n = int((dur + 0.35) * SR)
    ks = range(1, 9)  # partials decay faster the higher they are, like struck strings
    tone = _additive(f, n, [1 / k**1.3 for k in ks], decay=(1.2, 0.9))
    return tone * _env(n, 0.003, int(dur * SR), 0.3)


def _guitar(f, dur, rng):
    """Karplus-Strong: a noise burst circulating through a lossy averaging delay line."""
    period = max(round(SR / f - 0.5), 2)
    n = int((dur + 0.3) * SR)
    blocks = n // period + 2
    z = np.zeros(1 + blocks * period)  # z[i + 1] = y[i], so y[-1] reads as 0
    burst = lfilter([0.5, 0.5], [1.0], rng.uniform(-1, 1, period))  # softened pluck
    z[1 : period + 1] = burst - burst.mean()  # DC would never decay in the loop
    for b in range(1, blocks):  # y[n] = g * (y[n-P] + y[n-P-1]) only looks one block back
        prev = z[(b - 1) * period : b * period + 1]
        z[b * period + 1 : (b + 1) * period + 1] = 0.497 * (prev[1:] + prev[:-1])
    return z[1 : n + 1] * _env(n, 0.001, int(dur * SR), 0.25)


def _bass(f, dur, rng):
    n = int((dur + 0.1) * SR)
    tone = np.tanh(1.5 * _additive(f, n, [1.0, 0.5, 0.25], decay=(1.0, 1.0)))  # warm, slightly driven
    return tone * _env(n, 0.005, int(dur * SR), 0.08)


def _strings(f, dur, rng):
    n = int((dur + 0.4) * SR)
    amps = [1 / k**1.2 for k in range(1, 16)]  # a soft sawtooth, three detuned players
    tone = sum(_additive(f * d, n, amps, vibrato=0.004) for d in (0.996, 1.0, 1.004))
    return tone * _env(n, 0.15, int(dur * SR), 0.35) / 3


def _pad(f, dur, rng):
    n = int((dur + 0.6) * SR)
    tone = sum(_additive(f * d, n, [1.0, 0.3, 0.1]) for d in (0.993, 1.0, 1.007))
    return tone * _env(n, 0.4, int(dur * SR), 0.6) / 3


def _fm(f, n, ratio, index, index_decay, amp_decay):
    t = np.arange(n) / SR
    mod = index * np.exp(-index_decay * t) * np.sin(2 * np.pi * f * ratio * t)
    return np.sin(2 * np.pi * f * t + mod) * np.exp(-amp_decay * t)


def _synth(f, dur, rng):
    n = int((dur + 0.1) * SR)
    return _fm(f, n, 1.0, 3.0, 4.0, 0.5) * _env(n, 0.01, int(dur * SR), 0.08)


def _bells(f, dur, rng):
    n = int((dur + 1.2) * SR)
    return _fm(f, n, 1.4, 3.0, 3.0, 2.0) * _env(n, 0.002, n, 0.1)  # 1:1.4 FM: inharmonic, rings on


def _flute(f, dur, rng):
    n = int((dur + 0.12) * SR)
    breath = lfilter(*butter(2, 3000 / (SR / 2), "high"), rng.normal(0, 0.04, n))
    tone = _additive(f, n, [1.0, 0.2, 0.08], vibrato=0.003)
    return (tone + breath) * _env(n, 0.06, int(dur * SR), 0.1)


def drum_hit(kind: str, rng) -> np.ndarray:
    """One hit of `kind` (kick, snare or hat)."""
    if kind == "kick":  # pitch drops fast: the thump
        t = np.arange(int(0.35 * SR)) / SR
        freq = 48 + 110 * np.exp(-t * 30)
        return np.sin(2 * np.pi * np.cumsum(freq) / SR) * np.exp(-t * 9)
    if kind == "snare":  # band-passed noise plus a short body tone
        t = np.arange(int(0.25 * SR)) / SR
        noise = lfilter(*butter(2, [1500 / (SR / 2), 7000 / (SR / 2)], "band"), rng.normal(0, 1, t.size))
        return noise * np.exp(-t * 18) + 0.5 * np.sin(2 * np.pi * 190 * t) * np.exp(-t * 30)
    t = np.arange(int(0.08 * SR)) / SR  # closed hi-hat
    return lfilter(*butter(2, 7000 / (SR / 2), "high"), rng.normal(0, 1, t.size)) * np.exp(-t * 55)


TIMBRES: dict[str, Callable] = {
    "piano": _piano,
    "guitar": _guitar,
    "bass": _bass,
    "strings": _strings,
    "pad": _pad,
    "synth": _synth,
    "bells": _bells,
    "flute": _flute,
}
DRUMS = ("kick", "snare", "hat")
