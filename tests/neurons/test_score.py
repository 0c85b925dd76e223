"""audionet-score on files the tests write: real Kokoro speech, noise, silence, synth music,
corrupt and odd-format files. One Judge per module is handed to `main(argv, judge=)`; one
test runs the real command as a subprocess (its own model loading, real exit code)."""

import json
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

from audionet.lib.core.audio import Audio, resample
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import MUSIC, TTS, VC
from audionet.neurons import score
from tests.files import REPO
from tests.speech import VOICE_A, VOICE_B

TEXT = "Alice walked to the harbour at 7 o'clock and waited for the rain to stop."
TARGET = "Our train leaves from the market at nine thirty, so pack light."
REFERENCE_TEXT = "Bright sunlight filled the library as Hana opened the window."
RECORD_KEYS = {"file", "score", "seed", "components", "gates"}


@pytest.fixture(scope="module")
def judge():
    return Judge.load(devices="cpu")


@pytest.fixture
def write(tmp_path):
    """write(name, audio or (samples, rate)) -> path of a file soundfile writes in the format the name says."""

    def _write(name, audio):
        samples, rate = (audio.samples, audio.sample_rate) if isinstance(audio, Audio) else audio
        path = str(tmp_path / name)
        sf.write(path, samples, rate)
        return path

    return _write


def run_json(judge, capsys, argv):
    code = score.main([*argv, "--json"], judge=judge)
    out = capsys.readouterr()
    return code, {record["file"]: record for record in json.loads(out.out)}, out.err


def noise(seconds, rate=24_000):
    return Audio(0.1 * np.random.default_rng(0).standard_normal(int(seconds * rate)), rate)


def test_tts_speech_ranks_first_noise_and_silence_are_gated(judge, speech, write, capsys):
    clip = speech(TEXT)
    files = [
        write("speech.wav", clip),
        write("noise.ogg", noise(clip.seconds)),
        write("silence.flac", Audio(np.zeros_like(clip.samples), clip.sample_rate)),
    ]
    code, records, err = run_json(judge, capsys, ["--service", "tts", "--text", TEXT, *files])
    assert code == 0 and list(records) == files
    talk, hiss, quiet = (records[f] for f in files)
    for record in records.values():
        assert set(record) == RECORD_KEYS and set(record["gates"]) == set(TTS.judging.gates)
        assert all(isinstance(v, float) for v in record["components"].values())
    assert talk["score"] > 0.5 and not any(talk["gates"].values()) and talk["components"]["wer"] < 0.4
    assert talk["components"]["mos_student"] > 3.5  # the same defended Judge as the validator's: its ceiling is on
    assert hiss["score"] == quiet["score"] == 0.0
    assert hiss["gates"]["no_speech"] and quiet["gates"]["silent"]
    assert "judged by asr whisper:tiny.en" in err  # operators see which models judged


def test_a_seed_judges_the_file_again_exactly_and_without_one_each_run_draws_its_own(judge, speech, write, capsys):
    """A verdict row's seed reproduces the validator's verdict: the ASR hears the same noise (lib/scoring/listening.py)."""
    path = write("speech.wav", speech(TEXT))
    argv = ["--service", "tts", "--text", TEXT, path]
    drawn = [run_json(judge, capsys, argv)[1][path] for _ in range(2)]
    assert drawn[0]["seed"] != drawn[1]["seed"]  # fresh, secret seeds
    again = [run_json(judge, capsys, [*argv, "--seed", str(drawn[0]["seed"])])[1][path] for _ in range(2)]
    assert again[0] == again[1] == drawn[0]  # score, components and gates, under the seed logged with the verdict


def test_duplicate_pair_is_caught_and_the_table_says_why(judge, speech, write, capsys, monkeypatch):
    clip = speech(TEXT)
    files = [
        write("a.wav", clip),
        write("b.flac", Audio(clip.samples * 0.6, clip.sample_rate)),
        write("c.wav", speech(TEXT, VOICE_B)),
    ]
    code, records, _ = run_json(judge, capsys, ["--service", "tts", "--text", TEXT, *files])
    assert code == 0
    assert files[1] in records[files[0]]["gates"]["duplicate"] and files[0] in records[files[1]]["gates"]["duplicate"]
    assert records[files[0]]["score"] == records[files[1]]["score"] == 0.0 < records[files[2]]["score"]
    monkeypatch.setenv("COLUMNS", "250")  # long temporary paths: keep each reason on one line
    assert score.main(["--service", "tts", "--text", TEXT, *files], judge=judge) == 0
    table = capsys.readouterr().out.splitlines()
    duplicate_rows = [line for line in table if "near-duplicate of" in line]
    assert len(duplicate_rows) == 2 and files[0] in duplicate_rows[0] and files[1] in duplicate_rows[0]
    assert any(line.split()[:1] == ["intelligibility"] and line.split()[1:3] == ["-", "-"] for line in table)


def test_clone_in_the_reference_voice_beats_the_other_voice(judge, speech, write, capsys):
    reference = write("reference.wav", speech(REFERENCE_TEXT, VOICE_A))
    same, other = write("same.wav", speech(TARGET, VOICE_A)), write("other.wav", speech(TARGET, VOICE_B))
    code, records, _ = run_json(
        judge,
        capsys,
        [
            "--service",
            "vc",
            "--text",
            TARGET,
            "--reference",
            reference,
            "--reference-text",
            REFERENCE_TEXT,
            same,
            other,
        ],
    )
    assert code == 0 and set(records[same]["gates"]) == set(VC.judging.gates)
    assert records[same]["components"]["speaker_cosine"] > records[other]["components"]["speaker_cosine"] + 0.3
    assert records[same]["score"] > records[other]["score"] + 0.1


def test_music_beats_speech_for_a_music_prompt(judge, speech, write, capsys):
    prompt = "happy folk with flute, 100 bpm"
    music = MUSIC.load_backend("baseline:synth", warmup=False).generate(prompt, 6.0, seed=1)
    talk = speech("It is never too late to learn something new, said Alice with a smile, and then she left the room.")
    files = [write("synth.ogg", resample(music, 44_100)), write("talk.wav", talk)]
    code, records, _ = run_json(judge, capsys, ["--service", "music", "--text", prompt, *files])
    tonal, spoken = records[files[0]], records[files[1]]
    assert code == 0 and not any(tonal["gates"].values())
    assert tonal["components"]["duration_error"] == 0.0  # no --seconds: judged against its own length
    # the procedural synth is weak music to the learned judges (about 0.26), but speech is no music at all
    assert tonal["score"] > spoken["score"] + 0.2 and spoken["components"]["speech_penalty"] > 0.5


def test_bad_text_or_reference_is_one_line_before_any_model_loads(speech, write, capsys, monkeypatch):
    def must_not_load(*_):
        raise AssertionError("models loaded for a request that is already invalid")

    monkeypatch.setattr(score, "load_judge", must_not_load)
    clip = write("a.wav", speech(TEXT))
    silence = write("quiet.wav", (np.zeros(32_000), 16_000))
    cases = [
        (["--service", "tts", "--text", "   ", clip], "invalid 'text'"),
        (["--service", "tts", "--text", "x" * 401, clip], "at most 400 characters"),
        (["--service", "vc", "--text", TEXT, clip], "needs --reference"),
        (
            ["--service", "vc", "--text", TEXT, "--reference", silence, "--reference-text", "hi", clip],
            f"--reference {silence}: silent",
        ),
        (
            ["--service", "vc", "--text", TEXT, "--reference", clip + ".gone", "--reference-text", "hi", clip],
            "no such file",
        ),
        (["--service", "music", "--text", "piano", "--seconds", "45", clip], "invalid 'seconds'"),
        (["--service", "tts", "--text", TEXT, "--seconds", "5", clip], "only for --service music"),
    ]
    for argv, fragment in cases:
        assert score.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert fragment in err and len(err.strip().splitlines()) == 1, err
    with pytest.raises(SystemExit) as exit_:
        score.main(["--service", "tts", "--text", TEXT])  # no files: argparse's usage error
    assert exit_.value.code == 2


@pytest.mark.slow
def test_cli_scores_odd_formats_and_reports_bad_files_without_stopping(speech, write, tmp_path):
    """The real command: stereo 44.1 kHz and 96 kHz files are scored; a corrupt and a missing file
    each get one line on stderr, are listed as not scored, and make the exit status 1."""
    left = resample(speech(TEXT, VOICE_A), 44_100).samples
    stereo = write("stereo.wav", (np.stack([left, 0.8 * left], axis=1), 44_100))
    hi_rate = write("hi_rate.flac", resample(speech(TEXT, VOICE_B), 96_000))
    corrupt, missing = str(tmp_path / "corrupt.wav"), str(tmp_path / "missing.wav")
    with open(corrupt, "wb") as handle:
        handle.write(b"RIFF" + bytes(range(256)) * 40)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "audionet.neurons.score",
            "--service",
            "tts",
            "--text",
            TEXT,
            "--json",
            "--eval.devices",
            "cpu",
            stereo,
            corrupt,
            hi_rate,
            missing,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    complaints = [line for line in result.stderr.splitlines() if corrupt in line or missing in line]
    assert complaints == [
        f"audionet-score: {corrupt}: not a readable audio file (Format not recognised)",
        f"audionet-score: {missing}: no such file",
    ]
    records = json.loads(result.stdout)
    assert [r["file"] for r in records] == [stereo, corrupt, hi_rate, missing]
    for record in (records[0], records[2]):
        assert record["score"] > 0.5 and not any(record["gates"].values()), record
    for record in (records[1], records[3]):
        assert record["score"] == 0.0 and record["gates"]["missing"].startswith("could not read: ")
