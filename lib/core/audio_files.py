"""Local audio files -> the Audio the validator would use: the one loader for
answers scored by audionet-score and for reference clips (the validator's
`--vc.references`, audionet-score's `--reference`).

A file on disk (WAV/FLAC/OGG/... at any rate and channel count) is mixed down
by the mean and resampled only when its rate is outside 8-48 kHz (96 kHz ->
48 kHz). An answer then goes through the wire's FLAC round trip, so
quantisation, length caps and checks are the validator's own; a reference
must be 1-20 s, not silent (the answers' silence rule) and small enough as
FLAC to travel in a request. Every problem is one WireError line.
"""

from __future__ import annotations

import os

import soundfile as sf

from audionet.lib.core.audio import (
    MAX_SAMPLE_RATE,
    MIN_SAMPLE_RATE,
    UNKNOWN_FRAMES,
    Audio,
    check_audio,
    encode_flac,
    resample,
    seconds_text,
    silent,
)
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import MAX_REFERENCE_FLAC_BYTES, REFERENCE_SECONDS, decode_response_audio


def read_audio_file(path: str, *, max_seconds: float) -> Audio:
    """Any file soundfile reads -> mono float32 at a wire-legal rate, finite, at most `max_seconds`."""
    if not os.path.exists(path):
        raise WireError("no such file")
    if os.path.isdir(path):
        raise WireError("is a directory, not an audio file")
    try:
        with sf.SoundFile(path) as stream:
            rate, frames = stream.samplerate, stream.frames
            if 0 < frames < UNKNOWN_FRAMES and frames / rate > max_seconds:  # from the header: before reading it all
                raise WireError(
                    f"audio is {seconds_text(frames / rate, up=True)} s long; the limit is {max_seconds:g} s"
                )
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


def load_answer_file(path: str, max_seconds: float) -> Audio:
    """`path` as the validator would decode it as an answer of at most `max_seconds`."""
    audio = read_audio_file(path, max_seconds=max_seconds)
    return decode_response_audio(encode_flac(audio, max_seconds=max_seconds), max_seconds)


def load_reference_clip(path: str) -> Audio:
    """A reference clip a validator may send: 1-20 s, not silent, small enough as FLAC."""
    low, high = REFERENCE_SECONDS
    audio = read_audio_file(path, max_seconds=high)
    if audio.seconds < low:
        raise WireError(
            f"audio is {seconds_text(audio.seconds, up=False)} s long; references must be {low:g}-{high:g} s"
        )
    quiet = silent(audio)  # a reference that would fail the answers' silence gate says nothing of a voice
    if quiet:
        raise WireError(quiet)
    if len(encode_flac(audio)) > MAX_REFERENCE_FLAC_BYTES:
        raise WireError(f"larger than {MAX_REFERENCE_FLAC_BYTES} bytes as FLAC; use a shorter clip")
    return audio
