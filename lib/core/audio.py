"""Audio values and the lossless 16-bit FLAC codec used on the wire.

Every clip that comes from the wire goes through `decode_flac`, which checks
size, container, sample rate, channels, length and finiteness before the
samples reach any model. The sample rate is always read from the audio.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from math import gcd
from typing import Optional

import numpy as np
from scipy.signal import resample_poly

from audionet.lib.core.errors import WireError

MIN_SAMPLE_RATE = 8_000
MAX_SAMPLE_RATE = 48_000
MAX_CHANNELS = 2
FLAC_MAGIC = b"fLaC"
UNKNOWN_FRAMES = 1 << 36  # FLAC's total_samples has 36 bits: a larger count is libsndfile's "unknown"
PCM16_SCALE = 32767.0
SILENCE_DBFS = -45.0  # a 20 ms frame quieter than this counts as silent
MIN_ACTIVE_RATIO = 0.2  # audio with fewer frames above it is silent


@dataclass(frozen=True)
class Audio:
    """Float32 mono samples in [-1, 1] at `sample_rate` Hz."""

    samples: np.ndarray
    sample_rate: int

    def __post_init__(self) -> None:
        samples = np.ascontiguousarray(np.asarray(self.samples, dtype=np.float32).reshape(-1))
        object.__setattr__(self, "samples", samples)
        object.__setattr__(self, "sample_rate", int(self.sample_rate))

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate if self.sample_rate else 0.0


def seconds_text(seconds: float, up: bool) -> str:
    """`seconds` to the millisecond, rounded away from the limit it is compared with (0.9995 s is not '1.00')."""
    millis = math.ceil(seconds * 1000) if up else math.floor(seconds * 1000)
    return f"{millis / 1000:.3f}".rstrip("0").rstrip(".")


def check_audio(audio: Audio, *, max_seconds: float, min_seconds: float = 0.0) -> Audio:
    """Raise WireError unless `audio` has a sane rate, length and finite samples."""
    if not MIN_SAMPLE_RATE <= audio.sample_rate <= MAX_SAMPLE_RATE:
        raise WireError(f"sample rate {audio.sample_rate} Hz is outside {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz")
    if audio.seconds > max_seconds:
        raise WireError(f"audio is {seconds_text(audio.seconds, up=True)} s long; the limit is {max_seconds:g} s")
    if audio.seconds < min_seconds:
        raise WireError(
            f"audio is {seconds_text(audio.seconds, up=False)} s long; at least {min_seconds:g} s is needed"
        )
    if not np.isfinite(audio.samples).all():
        raise WireError("audio contains NaN or infinite samples")
    return audio


def encode_flac(audio: Audio, *, max_seconds: float = 600.0) -> bytes:
    """Lossless 16-bit FLAC bytes of `audio` (samples are clipped to [-1, 1])."""
    import soundfile as sf  # only where FLAC is written or read: generation and its timing need no codec

    check_audio(audio, max_seconds=max_seconds)
    buffer = io.BytesIO()
    # FLAC level 7 of 8: ~7% fewer bytes than the default for ~3 ms more CPU per
    # 15 s clip; level 8 saves <1% more and costs 3.5 ms more (benchmarks/wire.py).
    sf.write(buffer, pcm16(audio), audio.sample_rate, format="FLAC", subtype="PCM_16", compression_level=0.875)
    return buffer.getvalue()


def decode_flac(data: bytes, *, max_seconds: float, max_bytes: int, min_seconds: float = 0.0) -> Audio:
    """Decode and validate FLAC bytes from the wire; stereo is mixed down to mono."""
    import soundfile as sf

    if len(data) > max_bytes:
        raise WireError(f"audio is {len(data)} bytes; the limit is {max_bytes}", status=413)
    if not data.startswith(FLAC_MAGIC):
        raise WireError("audio is not a FLAC stream")
    try:
        with sf.SoundFile(io.BytesIO(data)) as stream:
            rate, channels = stream.samplerate, stream.channels
            if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
                raise WireError(f"sample rate {rate} Hz is outside {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz")
            if channels > MAX_CHANNELS:
                raise WireError(f"audio has {channels} channels; at most {MAX_CHANNELS} are accepted")
            # From the header: refuse before decoding. A header that does not know its length (FLAC's total_samples
            # 0) reads as libsndfile's largest count, and libsndfile fails part-way through such a stream.
            if stream.frames >= UNKNOWN_FRAMES:
                raise WireError("the FLAC header does not say how long the audio is (total_samples 0)")
            if stream.frames / rate > max_seconds:
                raise WireError(
                    f"audio is {seconds_text(stream.frames / rate, up=True)} s long; the limit is {max_seconds:g} s"
                )
            # Read at most one frame past the limit, whatever the header claims,
            # so a lying header cannot make us decode an unbounded stream.
            limit = int(max_seconds * rate) + 1
            frames = stream.read(frames=limit, dtype="int16", always_2d=True)
    except sf.LibsndfileError:
        raise WireError("audio could not be decoded as FLAC") from None
    mono = frames[:, 0] if channels == 1 else frames.mean(axis=1, dtype=np.float32)
    audio = Audio(mono.astype(np.float32) * np.float32(1.0 / PCM16_SCALE), rate)
    return check_audio(audio, max_seconds=max_seconds, min_seconds=min_seconds)


def frame_dbfs(audio: Audio, frame_s: float = 0.02) -> np.ndarray:
    """RMS level of each `frame_s` frame in dBFS (a floor of -120 dB for empty audio)."""
    size = max(1, int(audio.sample_rate * frame_s))
    count = len(audio.samples) // size
    if count == 0:
        return np.full(1, -120.0)
    frames = audio.samples[: count * size].astype(np.float64).reshape(count, size)
    rms = np.sqrt(np.mean(frames**2, axis=1))
    return 20.0 * np.log10(np.maximum(rms, 1e-6))


def silent(audio: Audio) -> Optional[str]:
    """One-line reason when too few frames are above SILENCE_DBFS, else None: the one silence
    rule, for answers (the validator's gate) and for reference clips (validator and score)."""
    active = float(np.mean(frame_dbfs(audio) > SILENCE_DBFS))
    if active < MIN_ACTIVE_RATIO:
        return f"silent: only {active:.0%} of frames above {SILENCE_DBFS:g} dBFS"
    return None


def resample(audio: Audio, sample_rate: int) -> Audio:
    """Polyphase resampling to `sample_rate` (a no-op when the rate matches)."""
    if audio.sample_rate == sample_rate:
        return audio
    g = gcd(audio.sample_rate, sample_rate)
    samples = resample_poly(audio.samples, sample_rate // g, audio.sample_rate // g)
    return Audio(samples.astype(np.float32), sample_rate)


def pcm16(audio: Audio) -> np.ndarray:
    """The int16 samples FLAC actually carries: what 'the same audio' means on the wire.
    One scale (32767) both ways makes encode -> decode -> pcm16 exact."""
    return np.round(np.clip(audio.samples, -1.0, 1.0) * PCM16_SCALE).astype(np.int16)
