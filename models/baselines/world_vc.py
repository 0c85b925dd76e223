"""Offline voice-cloning baseline: espeak-ng speech reshaped with the WORLD vocoder.

The text is spoken by `EspeakSynthesizer`, then WORLD (pyworld) splits it
into pitch (F0), spectral envelope and aperiodicity. Two things are moved
toward the reference speaker:

* pitch: voiced-frame log-F0 is shifted and scaled so its median and spread
  match the reference's;
* timbre: the spectral envelope is stretched along frequency by one ratio
  (clamped to 0.8-1.25), the ratio that best lines up the average envelopes
  of the two voices (a crude vocal-tract-length / formant shift).

Crude by design: it is the floor a neural cloner must beat, and it needs no
model weights. `reference_text` is accepted for the interface but unused:
neural cloners align it with the reference audio, this baseline does not.
"""

from __future__ import annotations

import numpy as np
import pyworld

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.lib.core.f0 import (
    F0_CEIL_HZ,
    F0_FLOOR_HZ,
    FRAME_PERIOD_MS,
    MAX_ANALYSIS_SECONDS,
    MIN_VOICED_FRAMES,
    WORK_RATE,
    as_world,
    track_f0,
)
from audionet.models.base import VoiceCloner
from audionet.models.baselines.espeak import VOICES, EspeakSynthesizer

__all__ = ["WorldVoiceCloner", "move_toward"]

WARP_LIMITS = (0.8, 1.25)
PEAK = 10 ** (-1 / 20)  # -1 dBFS

_FFT_SIZE = pyworld.get_cheaptrick_fft_size(WORK_RATE, F0_FLOOR_HZ)


def _log_f0_stats(f0: np.ndarray) -> tuple[float, float]:
    log_f0 = np.log(f0[f0 > 0])
    return float(np.median(log_f0)), float(np.std(log_f0))


def _mean_log_envelope(sp: np.ndarray, f0: np.ndarray) -> np.ndarray:
    return np.log(sp[f0 > 0] + 1e-12).mean(axis=0)


def estimate_warp(source_env: np.ndarray, target_env: np.ndarray, top_hz: float = 5000.0) -> float:
    """Frequency stretch ratio that best maps `source_env` onto `target_env`.

    Both are mean log envelopes over the cheaptrick bins. On a log-frequency
    axis a stretch is a shift, so we try shifts within WARP_LIMITS and keep
    the one with the highest correlation over 150 Hz-`top_hz` (where formants
    live and where a band-limited reference still has content).
    """
    bins_hz = np.arange(source_env.size) * WORK_RATE / _FFT_SIZE
    grid = np.geomspace(150.0, top_hz, 256)
    target = np.interp(grid, bins_hz, target_env)
    best_ratio, best_score = 1.0, -np.inf
    for ratio in np.geomspace(*WARP_LIMITS, 45):
        # warped(f) = source(f / ratio): formants move up when ratio > 1.
        warped = np.interp(grid / ratio, bins_hz, source_env)
        score = np.corrcoef(warped, target)[0, 1]
        if score > best_score:
            best_ratio, best_score = float(ratio), score
    return best_ratio


def warp_envelope(sp: np.ndarray, ratio: float) -> np.ndarray:
    """Stretch every frame of a spectral envelope along frequency by `ratio`."""
    bins = sp.shape[1]
    source = np.clip(np.arange(bins) / ratio, 0, bins - 1)
    low = np.floor(source).astype(int)
    high = np.minimum(low + 1, bins - 1)
    frac = source - low
    log_sp = np.log(sp + 1e-12)  # interpolate in the log domain, like formants
    return np.ascontiguousarray(np.exp(log_sp[:, low] * (1 - frac) + log_sp[:, high] * frac))


def map_f0(f0: np.ndarray, source: tuple[float, float], target: tuple[float, float]) -> np.ndarray:
    """Match voiced log-F0 median and spread (log-domain stats) to `target`."""
    (src_median, src_std), (dst_median, dst_std) = source, target
    scale = float(np.clip(dst_std / max(src_std, 1e-3), 0.5, 2.0))
    out = np.zeros_like(f0)
    voiced = f0 > 0
    out[voiced] = np.exp((np.log(f0[voiced]) - src_median) * scale + dst_median)
    return np.where(voiced, np.clip(out, F0_FLOOR_HZ, F0_CEIL_HZ), 0.0)


class WorldVoiceCloner(VoiceCloner):
    """espeak-ng speech moved toward the reference's pitch and formants with WORLD.

    `tts` defaults to a new `EspeakSynthesizer`; `voice` is the espeak voice
    the text is first spoken with.
    """

    model_id = "baseline:world"
    device = "cpu"
    sample_rate = WORK_RATE

    def __init__(self, tts: EspeakSynthesizer | None = None, voice: str = "en-us") -> None:
        if voice not in VOICES:
            raise ValueError(f"unknown espeak voice {voice!r}")
        self.tts = tts if tts is not None else EspeakSynthesizer()
        self.voice = voice

    def warmup(self) -> None:
        reference = self.tts.synthesize("Warm up the cloner.", seed=1)
        self.clone("Warm up.", reference, "Warm up the cloner.", seed=0)

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        del reference_text  # unused by this baseline (see module docstring)
        speech = self.tts.synthesize(text, voice=self.voice, seed=seed)  # seed -> prosody
        return move_toward(speech, reference)


def move_toward(speech: Audio, reference: Audio, *, warp: bool = True) -> Audio:
    """`speech` re-synthesised by WORLD with the reference's log-F0 median and
    spread and (when `warp`) its formants stretched toward the reference's."""
    ref = as_world(reference, MAX_ANALYSIS_SECONDS)
    ref_f0, ref_times = track_f0(ref)
    if np.count_nonzero(ref_f0) < MIN_VOICED_FRAMES:
        raise WireError("reference audio has too little voiced speech to clone")
    x = as_world(speech)
    f0, times = track_f0(x)
    sp = pyworld.cheaptrick(x, f0, times, WORK_RATE, fft_size=_FFT_SIZE)
    ap = pyworld.d4c(x, f0, times, WORK_RATE, fft_size=_FFT_SIZE)

    if np.count_nonzero(f0) >= MIN_VOICED_FRAMES:
        f0 = map_f0(f0, _log_f0_stats(f0), _log_f0_stats(ref_f0))
        if warp:
            ref_sp = pyworld.cheaptrick(ref, ref_f0, ref_times, WORK_RATE, fft_size=_FFT_SIZE)
            # A reference resampled up from a low rate has nothing above its Nyquist.
            top_hz = min(5000.0, 0.45 * reference.sample_rate)
            ratio = estimate_warp(_mean_log_envelope(sp, f0), _mean_log_envelope(ref_sp, ref_f0), top_hz)
            sp = warp_envelope(sp, ratio)

    y = pyworld.synthesize(f0, sp, ap, WORK_RATE, FRAME_PERIOD_MS)
    y = np.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0)
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak > 0:
        y = y * (PEAK / peak)
    return Audio(y.astype(np.float32), WORK_RATE)
