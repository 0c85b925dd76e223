"""Evaluator specs: HF-id evaluators on tiny random models built from config (real code path,
random weights), resemblyzer, and one-line errors for missing or unknown models."""

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import MUSIC, MusicRequest
from audionet.models.eval.loaders import load_evaluator
from audionet.models.eval.profiles import load_evaluators
from audionet.models.random_weights import random_model
from tests.speech import VOICE_A, VOICE_B


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory):
    """A tiny random CLAP saved with save_pretrained, with a real byte-level BPE tokenizer (the same builder
    as `audionet-bench --weights random`)."""
    return random_model("laion/larger_clap_music", str(tmp_path_factory.mktemp("tiny-clap")), size="tiny")


def test_clap_by_folder_scores_music_deterministically(tiny_clap):
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    judge = Judge.load({"asr": "none", "mos": "none", "clap": f"clap:{tiny_clap}"}, devices="cpu")
    assert judge.evaluators.describe()["clap"] == f"clap:{tiny_clap}"
    request = MusicRequest(prompt="calm ambient with pad, slow", seconds=12.0)
    clip = ProceduralMusicGenerator().generate(request.prompt, 12.0, seed=3)  # longer than CLAP's 10 s window
    first = judge.score(MUSIC.judging, [MUSIC.job(request, clip, "a")], remember=False)[0]
    again = judge.score(MUSIC.judging, [MUSIC.job(request, clip, "a")], remember=False)[0]
    assert "adherence" in first.components and -1.0 <= first.components["clap_cosine"] <= 1.0
    assert first.components["clap_cosine"] == again.components["clap_cosine"]  # centre crop, not random


def test_clap_cuts_a_prompt_longer_than_its_text_tower_reads(tiny_clap):
    """The tiny stand-in's letters are its tokens and its tower has 80 positions: a prompt of 200 letters (the
    GPU call's rehearsal met a validator's long one: 'index 80 is out of bounds') is cut at the 78 tokens the
    tower reads instead of an index error."""
    from transformers import ClapProcessor

    from audionet.models.baselines.synth import ProceduralMusicGenerator

    assert ClapProcessor.from_pretrained(tiny_clap).tokenizer.model_max_length == 78
    clap = load_evaluator("clap", f"clap:{tiny_clap}", "cpu")
    prompt = "warm lofi hip hop with dusty vinyl crackle, mellow rhodes chords, soft kick and snare, a lazy bass " * 2
    clip = ProceduralMusicGenerator().generate(prompt, 4.0, seed=1)
    (long,) = clap.score([prompt], [clip])
    (cut,) = clap.score([prompt[:60]], [clip])
    assert -1.0 <= long <= 1.0 and -1.0 <= cut <= 1.0


def test_wavlm_xvector_by_folder(tmp_path, speech):
    folder = random_model("microsoft/wavlm-base-plus-sv", str(tmp_path), size="tiny")
    encoder = load_evaluator("speaker", f"wavlm:{folder}", "cpu")
    vectors = encoder.embed([speech("One small step.", VOICE_A), speech("A giant leap.", VOICE_B)])
    assert vectors.shape == (2, 24) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_resemblyzer_separates_voices(speech):
    encoder = load_evaluator("speaker", "resemblyzer", "cpu")
    a1, a2, b = encoder.embed(
        [
            speech("The harbour was quiet tonight.", VOICE_A),
            speech("Our train leaves at nine thirty.", VOICE_A),
            speech("Our train leaves at nine thirty.", VOICE_B),
        ]
    )
    assert float(a1 @ a2) > float(a2 @ b) + 0.05


@pytest.mark.parametrize(
    "kind, spec, message",
    [
        ("asr", "whisper:/no/such/whisper", "not found locally and the hub is offline"),
        ("clap", "clap:laion/not-a-real-clap", "not found locally and the hub is offline"),
        ("speaker", "xvector", "unknown --eval.speaker spec"),
        ("mos", "utmos:/no/such/utmos", "does not exist"),
        ("vad", "x", "unknown evaluator kind"),
    ],
)
def test_bad_or_missing_models_are_one_line_errors(kind, spec, message):
    with pytest.raises(BackendError, match=message) as caught:
        load_evaluators({kind: spec}, device="cpu", warmup=False)
    assert "\n" not in str(caught.value)


def test_device_flag_is_checked():
    assert load_evaluator("clap", "none", "cpu") is None
    with pytest.raises(BackendError, match="--eval.devices"):
        load_evaluators({}, device="tpu", warmup=False)


def test_eval_devices_takes_a_comma_list_and_the_old_spelling_still_works(capsys):
    from audionet.lib.core.config import Parser
    from audionet.models.eval.profiles import EvalSettings, add_eval_flags

    parser = Parser(prog="audionet-score")
    add_eval_flags(parser)
    assert EvalSettings.from_flags(parser.parse_args(["--eval.devices", "cuda:0,cuda:1"])).devices == "cuda:0,cuda:1"
    assert EvalSettings.from_flags(parser.parse_args(["--eval.device", "cpu"])).devices == "cpu"
    assert capsys.readouterr().err.strip() == "audionet-score: warning: --eval.device is deprecated, use --eval.devices"
    with pytest.raises(BackendError, match="--eval.devices: give auto alone"):
        Judge.load(devices="auto,cpu")
