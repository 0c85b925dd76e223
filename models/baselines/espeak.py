"""Offline text-to-speech baseline: espeak-ng driven through ctypes.

espeak-ng is a formant synthesiser: robotic but real, tiny and CPU-only,
which makes it a useful floor for validators to score against and a
fallback when no neural model is available.

Determinism needs care. espeak-ng keeps synthesis state in C statics that
no API resets (pitch-flutter phase, echo buffer, AGC, and a noise generator
seeded from the clock at initialisation), so two identical requests on one
loaded library give different samples. Each request therefore loads a
private, fresh copy of the library from an in-memory file (memfd), seeds its
noise generator, speaks, and unloads it again: about 5 ms of overhead, and
the copy is never shared with other espeak users in the process (e.g. a
phonemiser), whose state we must not reset.
"""

from __future__ import annotations

import _ctypes
import ctypes
import os
import threading
from typing import Optional

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.core.stop import audio_budget, current, past_budget
from audionet.models.base import SpeechSynthesizer

__all__ = ["DEFAULT_VOICE", "SAMPLE_RATE", "VOICES", "EspeakSynthesizer"]

SAMPLE_RATE = 22_050  # what espeak-ng reports at initialisation

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
VOICES: dict[str, bytes] = {
    accent + variant: (spec + variant).encode("ascii") for accent, spec in _ACCENTS.items() for variant in _VARIANTS
}
DEFAULT_VOICE = "en-us"
RATES_WPM = (150, 185)  # the speaking rates a seed picks from (words per minute)

# Leading/trailing audio quieter than this is cut (about -50 dBFS).
_TRIM_THRESHOLD = 10 ** (-50 / 20)
_TRIM_PAD_SECONDS = 0.01
_TRIM_SLACK_S = 1.0  # synthesis under an audio budget runs this far past it: the silence trimmed off the ends

_CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)

# One request at a time: bounds memory, and keeps the C callbacks simple.
_LOCK = threading.Lock()
_LIBRARY: dict[str, object] = {}  # cached library bytes and data path


def _library_files() -> dict[str, object]:
    """The espeak-ng shared library's bytes and its data directory, read once."""
    if not _LIBRARY:
        try:
            import espeakng_loader

            with open(espeakng_loader.get_library_path(), "rb") as handle:
                image = handle.read()
            data_path = espeakng_loader.get_data_path().encode()
        except (ImportError, OSError, RuntimeError) as exc:
            raise BackendError(f"espeak-ng could not be found: {exc}") from None
        if not hasattr(os, "memfd_create"):
            raise BackendError("the espeak baseline needs Linux (memfd_create)")
        _LIBRARY.update(image=image, data_path=data_path, libc=ctypes.CDLL(None))
        _LIBRARY["libc"].free.argtypes = [ctypes.c_void_p]
    return _LIBRARY


def _declare(lib: ctypes.CDLL) -> None:
    lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    lib.espeak_SetSynthCallback.argtypes = [_CALLBACK_TYPE]
    lib.espeak_SetSynthCallback.restype = None
    lib.espeak_ListVoices.argtypes = [ctypes.c_void_p]
    lib.espeak_ListVoices.restype = ctypes.c_void_p
    lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
    lib.espeak_ng_SetRandSeed.restype = None
    lib.espeak_Synth.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_uint,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]


def _speak_fresh(
    text: bytes, voice: bytes, params: dict[int, int], noise_seed: int, max_samples: Optional[int] = None
) -> np.ndarray:
    """Speak `text` on a freshly loaded private copy of espeak-ng; int16 samples. Synthesis ends early once
    more than `max_samples` are out, or when the request this thread runs is stopped (`lib.core.stop`)."""
    files = _library_files()
    fd = os.memfd_create("espeak-ng", 0)
    try:
        with open(fd, "wb", closefd=False) as image:
            image.write(files["image"])
        lib = ctypes.CDLL(f"/proc/self/fd/{fd}")
    except OSError as exc:
        raise BackendError(f"espeak-ng could not be loaded: {exc}") from None
    finally:
        os.close(fd)  # the loader keeps its own mapping
    chunks: list[np.ndarray] = []
    stop = current()
    produced = [0]

    def on_audio(wav, num_samples, events) -> int:
        if wav and num_samples > 0:
            # A copy through bytes: np.ctypeslib.as_array would make (and ctypes cache for good) an array type and
            # a pointer type per chunk length, a few hundred bytes each, one more for every new length.
            chunks.append(np.frombuffer(ctypes.string_at(wav, num_samples * 2), np.int16))
            produced[0] += num_samples
        enough = max_samples is not None and produced[0] > max_samples
        return 1 if enough or (stop is not None and stop.is_set()) else 0  # 1 = stop synthesising

    callback = _CALLBACK_TYPE(on_audio)  # must outlive every call below
    voice_list = None
    try:
        _declare(lib)
        if lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, files["data_path"], 0) != SAMPLE_RATE:
            raise BackendError("espeak-ng failed to initialise at 22050 Hz")
        lib.espeak_SetSynthCallback(callback)
        # Build the voice list ourselves: espeak keeps it in a static array that
        # Terminate does not free, so we free it before unloading (no leak).
        voice_list = lib.espeak_ListVoices(None)
        if lib.espeak_SetVoiceByName(voice) != _EE_OK:
            raise BackendError(f"espeak-ng has no voice {voice.decode()!r}")
        for parameter, value in params.items():
            lib.espeak_SetParameter(parameter, value, 0)
        lib.espeak_ng_SetRandSeed(noise_seed)  # after Initialize, which seeds from the clock
        status = lib.espeak_Synth(text, len(text) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        lib.espeak_Synchronize()
        if status != _EE_OK:
            raise BackendError(f"espeak-ng synthesis failed with status {status}")
    finally:
        lib.espeak_Terminate()
        if voice_list:
            files["libc"].free(voice_list)
        _ctypes.dlclose(lib._handle)
    if stop is not None:
        stop.check()
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)


def _trim_silence(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    loud = np.flatnonzero(np.abs(samples) > _TRIM_THRESHOLD)
    if loud.size == 0:
        return samples[:0]
    pad = int(_TRIM_PAD_SECONDS * sample_rate)
    return samples[max(loud[0] - pad, 0) : loud[-1] + pad + 1]


class EspeakSynthesizer(SpeechSynthesizer):
    """espeak-ng TTS at 22050 Hz; `seed` picks speaking rate, pitch and pitch range.

    `voice` is None (meaning `default_voice`) or a key of `VOICES`.
    """

    model_id = "baseline:espeak"
    voices = tuple(sorted(VOICES))
    device = "cpu"
    sample_rate = SAMPLE_RATE

    def __init__(self, default_voice: str = DEFAULT_VOICE) -> None:
        if default_voice not in VOICES:
            raise ValueError(f"unknown espeak voice {default_voice!r}")
        self.default_voice = default_voice

    @staticmethod
    def prosody(seed: int) -> dict[str, int]:
        """The seed's speaking rate (wpm), pitch (0-100) and pitch range (0-100)."""
        rng = np.random.default_rng(int(seed) % 2**64)  # any int, negative included
        return {
            "rate": int(rng.integers(RATES_WPM[0], RATES_WPM[1] + 1)),
            "pitch": int(rng.integers(35, 66)),
            "pitch_range": int(rng.integers(30, 71)),
        }

    def synthesize(self, text: str, *, voice: str | None = None, seed: int = 0) -> Audio:
        return self.speak(text, voice=voice, seed=seed, **self.prosody(seed))

    def speak(
        self,
        text: str,
        *,
        voice: str | None = None,
        rate: int = 170,
        pitch: int = 50,
        pitch_range: int = 50,
        seed: int = 0,
    ) -> Audio:
        """Synthesise with explicit prosody (espeak units; values are clamped).

        Here `seed` only seeds espeak's breath/fricative noise; `synthesize`
        also derives the prosody from it.
        """
        budget = audio_budget()  # the request's answer limit: synthesis stops just past it
        max_samples = None if budget is None else int((budget + _TRIM_SLACK_S) * SAMPLE_RATE)
        pcm = self._pcm(text, voice, rate, pitch, pitch_range, seed, max_samples)
        if budget is not None and len(pcm) > max_samples:
            raise past_budget(len(pcm) / SAMPLE_RATE, budget)
        samples = _trim_silence(pcm.astype(np.float32) / 32768.0, SAMPLE_RATE)
        if samples.size == 0:  # the caller's text (fullwidth digits, say): not a fault of the backend
            raise WireError("the text speaks as silence: espeak-ng says nothing for it")
        return Audio(np.clip(samples, -1.0, 1.0), SAMPLE_RATE)

    def spoken_seconds(self, text: str, limit_s: float, rate: int = RATES_WPM[1]) -> float:
        """How long espeak-ng takes to say `text` at `rate` words per minute (pauses inside included, silence
        before and after not), counted only up to just past `limit_s`: an estimate of any English voice's length
        that reads every script, symbol, address and number the way espeak-ng's text rules do; 0 for text it
        says nothing for."""
        return self._counted(text, None, {"rate": rate, "pitch": 50, "pitch_range": 50}, 0, limit_s)

    def answer_seconds(self, text: str, *, voice: str | None = None, seed: int = 0, limit_s: float) -> float:
        """How long `synthesize` speaks `text` in `voice` with `seed`'s prosody (its rate among them): the same
        synthesis, counted up to just past `limit_s` and not kept (about 2 ms per second of speech)."""
        return self._counted(text, voice, self.prosody(seed), seed, limit_s)

    def _counted(self, text: str, voice, prosody: dict, seed: int, limit_s: float) -> float:
        max_samples = int(limit_s * SAMPLE_RATE) + 1
        pcm = self._pcm(text, voice, prosody["rate"], prosody["pitch"], prosody["pitch_range"], seed, max_samples)
        if len(pcm) >= max_samples:  # it ran past the limit: a pause where it was cut off is still speech time
            return len(pcm) / SAMPLE_RATE
        return len(_trim_silence(pcm.astype(np.float32) / 32768.0, SAMPLE_RATE)) / SAMPLE_RATE

    def _pcm(self, text, voice, rate, pitch, pitch_range, seed, max_samples: Optional[int] = None) -> np.ndarray:
        voice_name = self.default_voice if voice is None else voice
        if not isinstance(voice_name, str) or voice_name not in VOICES:
            raise WireError(f"unknown voice; choose one of: {', '.join(sorted(VOICES))}")
        # NUL would silently truncate the C string; other control characters are noise.
        cleaned = "".join(ch if ch.isprintable() else " " for ch in str(text)).strip()
        if not cleaned:
            raise BackendError("no text to speak")
        params = {
            _RATE: int(np.clip(rate, 80, 450)),
            _VOLUME: 100,
            _PITCH: int(np.clip(pitch, 0, 100)),
            _RANGE: int(np.clip(pitch_range, 0, 100)),
        }
        with _LOCK:
            return _speak_fresh(
                cleaned.encode("utf-8"), VOICES[voice_name], params, int(seed) & 0x7FFFFFFF, max_samples
            )
