"""Evaluator specs: HF-id evaluators on tiny random models built from config (real code path,
random weights), resemblyzer, and one-line errors for missing or unknown models."""

import numpy as np
import pytest

from audionet.lib.errors import BackendError
from audionet.lib.scoring.judge import Job, Judge
from audionet.lib.services import MUSIC, MusicRequest
from audionet.models.eval.profiles import load_clap, load_evaluators, load_speaker
from tests.speech import VOICE_A, VOICE_B


@pytest.fixture(scope="module")
def tiny_clap(tmp_path_factory):
    """A random CLAP saved with save_pretrained, with a real byte-level BPE tokenizer."""
    from transformers import (
        ClapAudioConfig,
        ClapConfig,
        ClapFeatureExtractor,
        ClapModel,
        ClapProcessor,
        ClapTextConfig,
        RobertaTokenizer,
    )

    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    for piece in list(letters + ",") + ["Ġ"] + ["Ġ" + c for c in letters]:
        vocab[piece] = len(vocab)
    tokenizer = RobertaTokenizer(vocab=vocab, merges=[("Ġ", c) for c in letters])
    text = ClapTextConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=80,
        projection_dim=16,
    )
    audio = ClapAudioConfig(
        patch_embeds_hidden_size=16, depths=[1, 1], num_attention_heads=[2, 2], hidden_size=32, projection_dim=16
    )
    folder = tmp_path_factory.mktemp("tiny-clap")
    config = ClapConfig(text_config=text.to_dict(), audio_config=audio.to_dict(), projection_dim=16)
    ClapModel(config).save_pretrained(folder)
    extractor = ClapFeatureExtractor(truncation="rand_trunc")
    ClapProcessor(feature_extractor=extractor, tokenizer=tokenizer).save_pretrained(folder)
    return str(folder)


def test_clap_by_folder_scores_music_deterministically(tiny_clap):
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    judge = Judge.load({"asr": "none", "mos": "none", "clap": f"clap:{tiny_clap}"}, device="cpu")
    assert judge.evaluators.describe()["clap"] == f"clap:{tiny_clap}"
    request = MusicRequest(prompt="calm ambient with pad, slow", seconds=12.0)
    clip = ProceduralMusicGenerator().generate(request.prompt, 12.0, seed=3)  # longer than CLAP's 10 s window
    first = judge.score(MUSIC, [Job(request, clip, "a")], remember=False)[0]
    again = judge.score(MUSIC, [Job(request, clip, "a")], remember=False)[0]
    assert "adherence" in first.components and -1.0 <= first.components["clap_cosine"] <= 1.0
    assert first.components["clap_cosine"] == again.components["clap_cosine"]  # centre crop, not random


def test_wavlm_xvector_by_folder(tmp_path, speech):
    from transformers import Wav2Vec2FeatureExtractor, WavLMConfig, WavLMForXVector

    config = WavLMConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(32, 32),
        conv_stride=(5, 4),
        conv_kernel=(10, 8),
        num_conv_pos_embeddings=16,
        tdnn_dim=(32, 32),
        tdnn_kernel=(3, 1),
        tdnn_dilation=(1, 1),
        xvector_output_dim=24,
    )
    WavLMForXVector(config).save_pretrained(tmp_path)
    Wav2Vec2FeatureExtractor(return_attention_mask=True).save_pretrained(tmp_path)
    encoder = load_speaker(f"wavlm:{tmp_path}", "cpu")
    vectors = encoder.embed([speech("One small step.", VOICE_A), speech("A giant leap.", VOICE_B)])
    assert vectors.shape == (2, 24) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_resemblyzer_separates_voices(speech):
    encoder = load_speaker("resemblyzer", "cpu")
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
    assert load_clap("none", "cpu") is None
    with pytest.raises(BackendError, match="--eval.device"):
        load_evaluators({}, device="tpu", warmup=False)
