import io

import numpy as np
import pytest
import soundfile as sf

from audionet.lib.core.audio import Audio, decode_flac, encode_flac, pcm16, resample
from audionet.lib.core.errors import WireError
from tests.conftest import tone


def flac_bytes(samples, rate, subtype="PCM_16"):
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, format="FLAC", subtype=subtype)
    return buffer.getvalue()


def test_flac_round_trip_is_lossless_at_16_bit_and_rate_comes_from_the_stream():
    audio = Audio(np.random.default_rng(0).uniform(-0.9, 0.9, 24_000 * 3), 24_000)
    decoded = decode_flac(encode_flac(audio), max_seconds=5, max_bytes=10**7)
    assert decoded.sample_rate == 24_000
    assert np.array_equal(pcm16(decoded), pcm16(audio))


def test_stereo_is_mixed_down_to_mono():
    left, right = np.full(8_000, 0.5), np.full(8_000, -0.25)
    decoded = decode_flac(flac_bytes(np.stack([left, right], axis=1), 8_000), max_seconds=2, max_bytes=10**6)
    assert decoded.samples.ndim == 1 and abs(float(decoded.samples.mean()) - 0.125) < 1e-3


@pytest.mark.parametrize(
    "data, message",
    [
        (b"RIFF....WAVEfmt ", "not a FLAC"),
        (b"fLaC" + b"\x00" * 64, "could not be decoded"),
        (flac_bytes(np.zeros(96_000), 96_000), "outside 8000-48000"),
        (flac_bytes(np.zeros((100, 3)), 16_000), "3 channels"),
        (flac_bytes(np.zeros(16_000 * 4), 16_000), "4 s long; the limit is 3 s"),
        (flac_bytes(np.zeros(16_000 * 3 + 1), 16_000), "3.001 s long; the limit is 3 s"),
    ],
)
def test_hostile_audio_gets_one_line_error(data, message):
    with pytest.raises(WireError) as info:
        decode_flac(data, max_seconds=3, max_bytes=10**6)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_size_cap_is_checked_before_decoding():
    with pytest.raises(WireError) as info:
        decode_flac(b"fLaC" + b"\x00" * 2000, max_seconds=3, max_bytes=1000)
    assert info.value.status == 413


def test_too_short_and_non_finite_audio_are_refused():
    with pytest.raises(WireError, match="at least 1 s"):
        decode_flac(encode_flac(tone(0.5)), max_seconds=3, min_seconds=1.0, max_bytes=10**6)
    bad = tone(1.0).samples.copy()
    bad[10] = np.nan
    with pytest.raises(WireError, match="NaN"):
        encode_flac(Audio(bad, 16_000))


def unknown_length(flac: bytes) -> bytes:
    """`flac` with STREAMINFO's 36-bit total_samples set to 0 ("unknown", which the format allows)."""
    data = bytearray(flac)
    data[21] &= 0xF0  # fLaC, a 4-byte block header, then 13 bytes of rates and sizes: the count's top 4 bits
    data[22:26] = b"\0\0\0\0"
    return bytes(data)


def test_a_flac_that_does_not_say_its_length_is_refused_as_such_and_lengths_are_shown_truly():
    """Issue 37: a FLAC with total_samples = 0 was reported as 418 trillion seconds long, and a 0.9995 s
    reference was refused as '1.00 s long; at least 1 s'."""
    with pytest.raises(WireError, match="does not say how long the audio is"):
        decode_flac(unknown_length(encode_flac(tone(1.5))), max_seconds=3, max_bytes=10**6)
    short = Audio(tone(1.0).samples[: int(16_000 * 0.9995)], 16_000)
    with pytest.raises(WireError, match=r"audio is 0\.999 s long; at least 1 s is needed"):
        decode_flac(encode_flac(short), max_seconds=3, min_seconds=1.0, max_bytes=10**6)


def test_resample_keeps_duration_and_pitch():
    audio = resample(tone(1.0, rate=22_050, freq=440.0), 16_000)
    assert audio.sample_rate == 16_000 and len(audio.samples) == 16_000
    spectrum = np.abs(np.fft.rfft(audio.samples))
    assert abs(np.argmax(spectrum) * 16_000 / len(audio.samples) - 440.0) < 2.0
