import numpy as np
import pytest
import soundfile as sf

from audionet.lib.core.errors import ConfigError
from audionet.lib.prompts.references import FileReferences, SynthesisedReferences


def write(folder, name, seconds=2.0, rate=16_000, text="Hello there, this is my voice."):
    t = np.arange(int(seconds * rate)) / rate
    sf.write(folder / f"{name}.wav", 0.3 * np.sin(2 * np.pi * 180 * t), rate)
    if text is not None:
        (folder / f"{name}.txt").write_text(text)


def test_file_references_load_and_draw(tmp_path):
    write(tmp_path, "alice")
    write(tmp_path, "bob", rate=44_100)
    refs = FileReferences(str(tmp_path))
    assert refs.names == ["alice", "bob"] and len(refs) == 2
    drawn = refs.draw(np.random.default_rng(0))
    assert drawn.transcript == "Hello there, this is my voice." and drawn.audio.seconds == pytest.approx(2.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(text=None), "missing transcript"),
        (dict(seconds=40.0), "the limit is 20 s"),
        (dict(seconds=0.5), "references must be 1-20 s"),
        (dict(text="  "), "transcript must be"),
    ],
)
def test_bad_reference_files_are_one_line_errors(tmp_path, kwargs, message):
    write(tmp_path, "clip", **kwargs)
    with pytest.raises(ConfigError, match=message) as caught:
        FileReferences(str(tmp_path))
    assert "\n" not in str(caught.value)


def test_empty_or_undecodable_reference_dir(tmp_path):
    with pytest.raises(ConfigError, match="no .wav"):
        FileReferences(str(tmp_path))
    (tmp_path / "x.wav").write_bytes(b"not audio at all")
    (tmp_path / "x.txt").write_text("words")
    with pytest.raises(ConfigError, match="not a readable audio file"):
        FileReferences(str(tmp_path))


def test_synthesised_references_are_fresh_each_draw():
    from audionet.models.baselines.espeak import EspeakSynthesizer

    refs = SynthesisedReferences([(EspeakSynthesizer(), ["en-us", "en-gb+f2"])])
    rng = np.random.default_rng(1)
    first, second = refs.draw(rng), refs.draw(rng)
    assert first.transcript != second.transcript and first.audio.seconds > 1.0
