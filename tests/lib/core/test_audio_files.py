"""load_answer_file / load_reference_clip: any local file ends as the exact Audio the validator decodes from the wire."""

import numpy as np
import pytest
import soundfile as sf

from audionet.lib.core.audio import encode_flac, pcm16
from audionet.lib.core.audio_files import load_answer_file, load_reference_clip, read_audio_file
from audionet.lib.core.errors import WireError
from audionet.lib.services import TTS


def sine(seconds, rate, freq=440.0, level=0.5):
    t = np.arange(int(seconds * rate)) / rate
    return level * np.sin(2 * np.pi * freq * t)


@pytest.mark.parametrize(
    "name, rate, subtype, expected_rate",
    [
        ("hi.wav", 96_000, "PCM_24", 48_000),  # above 48 kHz: resampled down
        ("lo.wav", 4_000, "PCM_16", 8_000),  # below 8 kHz: up to the lowest legal rate
        ("cd.flac", 44_100, "PCM_16", 44_100),  # legal rate: kept as is
        ("v.ogg", 22_050, "VORBIS", 22_050),
    ],
)
def test_any_format_and_rate_ends_in_the_wire_representation(tmp_path, name, rate, subtype, expected_rate):
    path = str(tmp_path / name)
    left = sine(2.0, rate)
    sf.write(path, np.stack([left, np.zeros_like(left)], axis=1), rate, subtype=subtype)  # stereo
    audio = load_answer_file(path, TTS.answer_limit_s)
    assert audio.sample_rate == expected_rate and audio.seconds == pytest.approx(2.0, abs=1e-3)
    # Mixed down by the mean, like the validator's decoder: one silent channel halves the level.
    assert float(np.abs(audio.samples).max()) == pytest.approx(0.25, abs=0.02)
    # Already what the wire carries: another FLAC round trip changes no sample.
    again = TTS.decode_answer(encode_flac(audio))
    assert np.array_equal(pcm16(again), pcm16(audio)) and np.array_equal(again.samples, audio.samples)


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(b"RIFF" + bytes(200)), "not a readable audio file"),
        (lambda p: p.write_bytes(b""), "not a readable audio file"),
        (lambda p: sf.write(str(p), np.zeros((0, 1)), 16_000, format="WAV"), "contains no samples"),
        (
            lambda p: sf.write(str(p), np.r_[sine(1.0, 16_000), np.nan], 16_000, format="WAV", subtype="FLOAT"),
            "NaN or infinite",
        ),
        (
            lambda p: sf.write(str(p), np.zeros(int(16_000 * (TTS.answer_limit_s + 1))), 16_000, format="WAV"),
            "the limit is 34 s",
        ),
    ],
)
def test_bad_files_are_one_line_wire_errors(tmp_path, make, fragment):
    path = tmp_path / "clip.wav"
    make(path)
    with pytest.raises(WireError) as error:
        load_answer_file(str(path), TTS.answer_limit_s)
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_a_long_file_is_refused_with_its_real_length_from_the_header(tmp_path):
    path = str(tmp_path / "long.wav")
    with sf.SoundFile(path, "w", samplerate=8_000, channels=1, format="WAV", subtype="PCM_16") as stream:
        stream.write(np.zeros(8_000 * 600, dtype=np.int16))  # ten minutes
    with pytest.raises(WireError, match="600 s long; the limit is 5 s"):
        read_audio_file(path, max_seconds=5.0)


@pytest.mark.parametrize("level_dbfs, passes", [(-20.0, True), (-50.0, False)])
def test_references_pass_or_fail_the_answers_silence_rule(tmp_path, level_dbfs, passes):
    """One loader, one silence rule: a clip peaking at -50 dBFS is refused as a reference
    (the validator's --vc.references and audionet-score's --reference alike)."""
    path = str(tmp_path / "ref.wav")
    sf.write(path, sine(2.0, 16_000, level=10 ** (level_dbfs / 20)), 16_000)
    if passes:
        assert load_reference_clip(path).seconds == pytest.approx(2.0)
    else:
        with pytest.raises(WireError, match="silent"):
            load_reference_clip(path)


def test_reference_rate_is_brought_into_range_not_refused(tmp_path):
    path = str(tmp_path / "ref96k.wav")
    sf.write(path, sine(2.0, 96_000), 96_000)
    assert load_reference_clip(path).sample_rate == 48_000
