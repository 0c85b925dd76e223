"""Offline text-to-speech baseline: espeak-ng driven through ctypes.

espeak-ng is a formant synthesiser: robotic but real, tiny, CPU-only and
fully deterministic, which makes it a useful floor for validators to score
against and a fallback when no neural model is available.

The library keeps all of its state in C globals (current voice, parameters,
the synth callback), so every call goes through one process-wide lock and the
library is initialised once, lazily, on first use.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Dict, List, Optional

import numpy as np

from lib.audio import Audio
from lib.errors import BackendError, WireError
from models.base import SpeechSynthesizer

__all__ = ["EspeakSynthesizer", "VOICES", "DEFAULT_VOICE"]

# espeak-ng API constants (speak_lib.h).
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_RATE, _VOLUME, _PITCH, _RANGE = 1, 2, 3, 4
_EE_OK = 0

# Wire voice name -> espeak voice spec. A fixed allow-list: the wire string is
# only ever a dictionary key, never handed to espeak or used as a path.
_ACCENTS = {"en-us": "en-us", "en-gb": "en"}
_VARIANTS = ["", "+f1", "+f2", "+f3", "+f4", "+m1", "+m2", "+m3", "+m4"]
VOICES: Dict[str, bytes] = {
    accent + variant: (spec + variant).encode("ascii")
    for accent, spec in _ACCENTS.items()
    for variant in _VARIANTS
}
DEFAULT_VOICE = "en-us"

# Leading/trailing audio quieter than this is cut (about -50 dBFS).
_TRIM_THRESHOLD = 10 ** (-50 / 20)
_TRIM_PAD_SECONDS = 0.01

_CALLBACK_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class _Espeak:
    """The single per-process espeak-ng instance; use only under `_LOCK`."""

    def __init__(self) -> None:
        try:
            import espeakng_loader

            lib = ctypes.CDLL(espeakng_loader.get_library_path())
            data_path = espeakng_loader.get_data_path().encode()
        except (ImportError, OSError) as exc:
            raise BackendError(f"espeak-ng library could not be loaded: {exc}") from None
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_CALLBACK_TYPE]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]
        lib.espeak_Synchronize.argtypes = []
        lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        lib.espeak_ng_SetRandSeed.restype = None
        self.sample_rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path, 0)
        if self.sample_rate <= 0:
            raise BackendError("espeak-ng failed to initialise")
        self.lib = lib
        self._chunks: List[np.ndarray] = []
        # Keep a reference to the ctypes callback: if it were garbage
        # collected, espeak would call into freed memory.
        self._callback = _CALLBACK_TYPE(self._on_audio)
        lib.espeak_SetSynthCallback(self._callback)

    def _on_audio(self, wav, num_samples, events) -> int:
        if wav and num_samples > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(num_samples,)).copy())
        return 0  # 0 = keep synthesising

    def speak(
        self, text: bytes, voice: bytes, rate: int, pitch: int, pitch_range: int, noise_seed: int
    ) -> np.ndarray:
        lib = self.lib
        # espeak's breath/fricative noise comes from an internal PRNG; reseed
        # it so identical requests give identical samples.
        lib.espeak_ng_SetRandSeed(noise_seed)
        if lib.espeak_SetVoiceByName(voice) != _EE_OK:
            raise BackendError(f"espeak-ng has no voice {voice.decode()!r}")
        # Parameters persist between calls, so set every one we rely on.
        for parameter, value in ((_RATE, rate), (_VOLUME, 100), (_PITCH, pitch), (_RANGE, pitch_range)):
            lib.espeak_SetParameter(parameter, value, 0)
        self._chunks = []
        status = lib.espeak_Synth(text, len(text) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        lib.espeak_Synchronize()
        chunks, self._chunks = self._chunks, []
        if status != _EE_OK:
            raise BackendError(f"espeak-ng synthesis failed with status {status}")
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)


_LOCK = threading.Lock()
_ENGINE: Optional[_Espeak] = None


def _engine() -> _Espeak:
    """The process-wide engine, created on first use; call with `_LOCK` held."""
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = _Espeak()
    return _ENGINE


def _trim_silence(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    loud = np.flatnonzero(np.abs(samples) > _TRIM_THRESHOLD)
    if loud.size == 0:
        return samples[:0]
    pad = int(_TRIM_PAD_SECONDS * sample_rate)
    return samples[max(loud[0] - pad, 0): loud[-1] + pad + 1]


class EspeakSynthesizer(SpeechSynthesizer):
    """espeak-ng TTS; `seed` picks speaking rate, pitch and pitch range.

    `voice` is None (meaning `default_voice`) or a key of `VOICES`.
    """

    model_id = "baseline:espeak"
    device = "cpu"

    def __init__(self, default_voice: str = DEFAULT_VOICE) -> None:
        if default_voice not in VOICES:
            raise ValueError(f"unknown espeak voice {default_voice!r}")
        self.default_voice = default_voice

    @property
    def sample_rate(self) -> int:
        with _LOCK:
            return _engine().sample_rate

    @staticmethod
    def prosody(seed: int) -> Dict[str, int]:
        """The seed's speaking rate (wpm), pitch (0-100) and pitch range (0-100)."""
        rng = np.random.default_rng(seed)
        return {
            "rate": int(rng.integers(150, 186)),
            "pitch": int(rng.integers(35, 66)),
            "pitch_range": int(rng.integers(30, 71)),
        }

    def synthesize(self, text: str, *, voice: Optional[str] = None, seed: int = 0) -> Audio:
        return self.speak(text, voice=voice, seed=seed, **self.prosody(seed))

    def speak(
        self,
        text: str,
        *,
        voice: Optional[str] = None,
        rate: int = 170,
        pitch: int = 50,
        pitch_range: int = 50,
        seed: int = 0,
    ) -> Audio:
        """Synthesise with explicit prosody (espeak units; values are clamped).

        `seed` only seeds espeak's noise source here; `synthesize` also derives
        the prosody from it.
        """
        voice_name = self.default_voice if voice is None else voice
        if not isinstance(voice_name, str) or voice_name not in VOICES:
            raise WireError(f"unknown voice; choose one of: {', '.join(sorted(VOICES))}")
        # NUL would silently truncate the C string; control characters are noise.
        cleaned = "".join(ch if ch.isprintable() else " " for ch in str(text)).strip()
        if not cleaned:
            raise BackendError("no text to speak")
        rate = int(np.clip(rate, 80, 450))
        pitch = int(np.clip(pitch, 0, 100))
        pitch_range = int(np.clip(pitch_range, 0, 100))
        with _LOCK:
            engine = _engine()
            pcm = engine.speak(
                cleaned.encode("utf-8"), VOICES[voice_name], rate, pitch, pitch_range, int(seed) & 0x7FFFFFFF
            )
            sample_rate = engine.sample_rate
        samples = _trim_silence(pcm.astype(np.float32) / 32768.0, sample_rate)
        if samples.size == 0:
            raise BackendError("espeak-ng produced no audio for this text")
        return Audio(np.clip(samples, -1.0, 1.0), sample_rate)
