"""Local audio files -> the exact Audio the validator would score.

A miner's answer reaches the validator as 16-bit mono-mixable FLAC at 8-48 kHz
and goes through `decode_response_audio`. A file on disk (WAV/FLAC/OGG/... at
any rate and channel count) is brought to that same representation: mixed
down, resampled only when its rate is outside 8-48 kHz, then round-tripped
through `encode_flac` -> `decode_response_audio`, so quantisation, length caps
and checks are the validator's own. Every problem is one WireError line.
"""
from __future__ import annotations

import os

import soundfile as sf

from lib.audio import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE, Audio, check_audio, encode_flac, resample
from lib.errors import WireError
from lib.protocol import decode_response_audio, max_response_seconds


def read_audio_file(path: str, *, max_seconds: float) -> Audio:
    """Any file soundfile reads -> mono float32 at a wire-legal rate, finite, at most `max_seconds`."""
    if not os.path.exists(path):
        raise WireError("no such file")
    if os.path.isdir(path):
        raise WireError("is a directory, not an audio file")
    try:
        with sf.SoundFile(path) as stream:
            rate, frames = stream.samplerate, stream.frames
            if frames > 0 and frames / rate > max_seconds:  # from the header: refuse before reading it all
                raise WireError(f"audio is {frames / rate:.2f} s long; the limit is {max_seconds:g} s")
            # Never read more than one frame past the limit, whatever the header says.
            samples = stream.read(frames=int(max_seconds * rate) + 1, dtype="float32", always_2d=True)
    except sf.LibsndfileError as error:
        raise WireError(f"not a readable audio file ({error.error_string.rstrip('.')})") from None
    except (OSError, RuntimeError) as error:
        raise WireError(f"cannot read: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
    if samples.size == 0:
        raise WireError("audio contains no samples")
    mono = Audio(samples.mean(axis=1), rate)  # the validator mixes channels down by their mean too
    legal = resample(mono, min(max(rate, MIN_SAMPLE_RATE), MAX_SAMPLE_RATE))  # e.g. 96 kHz -> 48 kHz
    return check_audio(legal, max_seconds=max_seconds)  # NaN/inf survive resampling, so this still sees them


def load_audio_file(path: str, service: str) -> Audio:
    """`path` as the validator would see it in an answer for `service` (raises WireError, one line)."""
    audio = read_audio_file(path, max_seconds=max_response_seconds(service))
    return decode_response_audio(service, encode_flac(audio, max_seconds=max_response_seconds(service)))
