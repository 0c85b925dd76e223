"""Every transformers architecture we serve, as a tiny random-weight model built
from local files, saved with save_pretrained and loaded through the registry."""

import numpy as np
import pytest

from audionet.lib import services
from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.services import MUSIC, TTS, VC
from audionet.models.random_weights import random_spec
from tests.batching import together
from tests.conftest import tone

pytestmark = pytest.mark.timeout(300)

IDS = {
    "music": "hf:facebook/musicgen-small",
    "vits": "hf:facebook/mms-tts-eng",
    "speecht5": "hf:microsoft/speecht5_tts",
    "dia": "hf:nari-labs/Dia-1.6B-0626",
}


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("random-models"))
    return {name: random_spec(spec, cache, size="tiny") for name, spec in IDS.items()}


@pytest.fixture(scope="module")
def music(specs):
    return MUSIC.load_backend(specs["music"], device="cpu", preset="fast")


def check(audio: Audio, rate: int, min_seconds: float, max_seconds: float) -> None:
    assert audio.sample_rate == rate
    assert audio.samples.dtype == np.float32 and audio.samples.ndim == 1
    assert np.isfinite(audio.samples).all() and np.abs(audio.samples).max() <= 1.0
    assert min_seconds <= audio.seconds <= max_seconds, audio.seconds


def test_random_spec_builds_once_and_leaves_other_specs_alone(specs, tmp_path_factory):
    assert all(s.startswith("hf:/") for s in specs.values())
    cache = str(tmp_path_factory.getbasetemp() / "random-models0")
    assert random_spec(IDS["vits"], cache, size="tiny") == specs["vits"]  # reused, not rebuilt
    assert random_spec("kokoro:jf_alpha", cache) == "kokoro:jf_alpha"
    assert random_spec("hf:some/unknown-model", cache) == "hf:some/unknown-model"


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a GPU is visible: the build succeeds there")
def test_a_stand_in_asked_on_a_gpu_that_is_not_there_is_built_on_the_cpu(tmp_path, caplog):
    """random_model makes the weights on a CUDA device first; where that fails (here: no GPU) the CPU builds
    the same folder and a log line says why."""
    spec = random_spec(IDS["vits"], str(tmp_path), size="tiny", device="cuda:0")
    assert "building facebook/mms-tts-eng on cuda:0 failed" in caplog.text
    backend = TTS.load_backend(spec, warmup=False)
    assert backend.synthesize("Built where it could be.").seconds > 0


def test_musicgen_length_rate_and_seed(music):
    import torch

    assert music.frame_rate == 50 and music.model_id.endswith("musicgen-small-random-tiny")
    # CPU: float32, eager decoder (no static cache / torch.compile), no batching wait.
    assert music.dtype == torch.float32 and music.want_compile is False and music.batcher.window_s == 0.0
    first = music.generate("calm piano", 2.5, seed=7)
    check(first, 32_000, 2.5, 2.5)
    assert np.array_equal(first.samples, music.generate("calm piano", 2.5, seed=7).samples)
    assert music.tokens_for(2.5) == music.tokens_for(3.9) == 4 * 50 + 4  # one 2-s bucket
    assert music.tokens_for(300) == 30 * 50 + 4  # capped


def test_musicgen_compiles_at_the_first_warm_up_only(music, monkeypatch):
    """The pool times warm-ups again at start-up; each must not wrap the decoder in torch.compile anew."""
    import torch

    wrapped = []
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: wrapped.append(fn) or fn)  # eager: the call is counted
    monkeypatch.setattr(music, "want_compile", True)
    monkeypatch.setattr(music, "compiled", None)
    for _ in range(3):
        music.warmup()
    assert len(wrapped) == 1 and music.compiled is True


def test_a_compiled_decoder_step_returns_outputs_the_next_step_does_not_overwrite():
    """What a CUDA graph's replay does on the GPU (one output buffer for every call), on the CPU."""
    import torch
    from transformers.modeling_outputs import CausalLMOutputWithPast

    from audionet.models.hf.musicgen import owned_outputs

    buffer = torch.zeros(2, 3)

    def replay(x):
        buffer.copy_(x)
        return CausalLMOutputWithPast(logits=buffer)

    step = owned_outputs(replay)  # without it, the first step's logits would read 2 after the second step
    first, second = step(torch.ones(2, 3)), step(torch.full((2, 3), 2.0))
    assert first.logits.eq(1).all() and second.logits.eq(2).all() and second.logits.data_ptr() != buffer.data_ptr()


def test_musicgen_batches_concurrent_requests_of_one_bucket(music):
    calls = [lambda i=i: music.generate("drums", 2.2 + 0.5 * i, seed=i) for i in range(3)]
    out, batches = together(music.batcher, calls)
    assert [round(out[i].seconds, 3) for i in range(3)] == [2.2, 2.7, 3.2]
    assert batches == [3]


def test_musicgen_stages_are_timed_in_order(music):
    seen = []

    class Stage:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            return False

    music.measure = Stage
    try:
        music.generate("ambient", 1.0, seed=1)
    finally:
        music.measure = None
    assert seen == ["text_encoder", "decoder", "audio_codec"]


@pytest.mark.parametrize("name", ["vits", "speecht5"])
def test_transformers_tts(specs, name):
    tts = TTS.load_backend(specs[name], device="cpu")
    text = "Hello there. " * 3 + "This is a longer sentence, spoken by a model with random weights."
    audio = tts.synthesize(text, seed=3)
    check(audio, 16_000, 0.05, 60.0)
    assert np.array_equal(audio.samples, tts.synthesize(text, seed=3).samples)
    with pytest.raises(WireError):
        tts.synthesize("Hello.", voice="someone-else")


def test_vits_stays_in_float32_where_auto_means_half_precision(specs, monkeypatch):
    """On a GPU `auto` is bf16, which stopped VITS's flow on an H200; VITS keeps float32 unless asked."""
    import torch

    from audionet.models.hf import tts as hf_tts

    resolve = hf_tts.resolve_dtype
    monkeypatch.setattr(
        hf_tts, "resolve_dtype", lambda dtype, device: torch.bfloat16 if dtype == "auto" else resolve(dtype, device)
    )
    assert TTS.load_backend(specs["vits"], device="cpu").dtype == torch.float32
    assert TTS.load_backend(specs["speecht5"], device="cpu").dtype == torch.bfloat16  # the others follow auto
    assert TTS.load_backend(specs["vits"], device="cpu", dtype="bfloat16").dtype == torch.bfloat16


def test_dia_voice_clone(specs):
    vc = VC.load_backend(specs["dia"], device="cpu")
    reference = tone(1.5, 16_000, 180.0)
    audio = vc.clone("Short line.", reference, "The reference transcript.", seed=2)
    check(audio, 44_100, 0.05, 30.0)
    assert np.array_equal(
        audio.samples, vc.clone("Short line.", reference, "The reference transcript.", seed=2).samples
    )


def test_wrong_service_missing_model_and_bad_flags_are_one_line_errors(specs, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cases = [
        ("tts", specs["music"], "is a MusicGenMusicGenerator, not a tts backend (SpeechSynthesizer)"),
        (
            "music",
            "hf:facebook/musicgen-small",
            "model facebook/musicgen-small not found locally and the hub is offline",
        ),
        ("music", "hf:musicgen", "model facebook/musicgen-medium not found locally and the hub is offline"),
        ("tts", "hf:/no/such/dir", "does not exist"),
        ("music", "hf:", "needs a model id"),
    ]
    for kind, spec, message in cases:
        with pytest.raises(BackendError) as error:
            services.get(kind).load_backend(spec, device="cpu")
        assert message in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(BackendError, match="unknown dtype"):
        TTS.load_backend(specs["vits"], device="cpu", dtype="int3")
    with pytest.raises(BackendError, match="unknown device"):
        TTS.load_backend(specs["vits"], device="tpu")
