"""Evaluation profiles: the standard and large profiles' real architectures with random weights
(models/random_weights/) load through the profile's own code path, judge real speech and
music with every evaluator, batched and under torch.inference_mode; a validator on a real
network refuses offline evaluators unless asked for them by name."""

import math

import numpy as np
import pytest

from audionet.lib.core.errors import BackendError, ConfigError
from audionet.lib.core.neuron import is_real_network
from audionet.lib.scoring.judge import Judge
from audionet.lib.services import MUSIC, TTS, VC, MusicRequest, Prompt, TTSRequest, registry
from audionet.models.eval.loaders import KINDS, load_evaluator
from audionet.models.eval.profiles import PROFILES, load_evaluators, offline_only, resolve_specs
from audionet.models.random_weights import random_specs
from tests.speech import VOICE_A, VOICE_B

pytestmark = pytest.mark.timeout(600)
TEXT = "Alice walked to the harbour at seven and waited for the rain to stop."


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory):
    """The large profile's specs (a superset of standard's models) pointing at tiny random stand-ins."""
    return random_specs(resolve_specs("large"), str(tmp_path_factory.mktemp("random-evaluators")), size="tiny")


@pytest.fixture(scope="module")
def judge(stand_ins):
    return Judge(load_evaluators(stand_ins, device="cpu"))


def test_profiles_name_every_kind_and_overrides_win():
    for name, specs in PROFILES.items():
        assert set(specs) == set(KINDS), name
    assert PROFILES["standard"]["asr"] == "whisper:large-v3-turbo" and PROFILES["large"]["asr"] == "whisper:large-v3"
    assert resolve_specs("standard", {"clap": "none", "asr": ""})["clap"] == "none"  # empty = keep the profile's
    assert resolve_specs("standard", {"asr": None})["asr"] == "whisper:large-v3-turbo"
    assert offline_only(resolve_specs("standard", {"clap": "none"})) == ["clap"]
    assert offline_only(resolve_specs("standard")) == []
    with pytest.raises(BackendError, match="unknown evaluation profile"):
        resolve_specs("huge")


@pytest.mark.slow
def test_the_profile_judges_speech_voice_and_music_with_every_model(judge, speech):
    describe = judge.evaluators.describe()
    assert (
        "utmos:" in describe["mos"] and "dnsmos" in describe["mos"] and describe["aesthetics"].startswith("audiobox:")
    )
    clip = speech(TEXT)
    (tts,) = judge.score(TTS.judging, [TTS.job(TTSRequest(text=TEXT), clip, "a")], remember=False)
    for key in ("mos_utmos", "mos_dnsmos", "mos", "naturalness", "wer", "intelligibility"):
        assert key in tts.components and math.isfinite(tts.components[key]), key
    assert tts.components["mos"] == tts.components["mos_utmos"]  # the first predictor is the one tables show

    from audionet.lib.prompts.references import Reference

    reference = Reference(
        "a", speech("Bright sunlight filled the library.", VOICE_A), "Bright sunlight filled the library."
    )
    request = VC.request(Prompt(TEXT, reference=reference))
    same, other = judge.score(
        VC.judging,
        [VC.job(request, speech(TEXT, VOICE_A), "same"), VC.job(request, speech(TEXT, VOICE_B), "b")],
        remember=False,
    )
    assert -1.0 <= same.components["speaker_cosine"] <= 1.0 and "similarity" in other.components

    synth = MUSIC.load_backend("baseline:synth", warmup=False)
    music = MusicRequest(prompt="calm piano, 80 bpm", seconds=6.0)
    (verdict,) = judge.score(
        MUSIC.judging, [MUSIC.job(music, synth.generate(music.prompt, 6.0, seed=1), "m")], remember=False
    )
    for key in ("clap_cosine", "adherence", "aes_pq", "aes_ce", "aes_cu", "aes_pc", "aesthetics", "quality"):
        assert key in verdict.components and math.isfinite(verdict.components[key]), key
    again = judge.score(
        MUSIC.judging, [MUSIC.job(music, synth.generate(music.prompt, 6.0, seed=1), "m")], remember=False
    )[0]
    assert again.components == verdict.components  # reproducible: same audio, same verdict


@pytest.mark.slow
def test_torch_evaluators_run_batched_under_inference_mode(judge, speech):
    import torch

    ev = judge.evaluators
    networks = {
        "aesthetics": ev.aesthetics._network,
        "clap": ev.clap._model.audio_model,
        "speaker": ev.speaker._model,
        "utmos": ev.mos[0]._network,
    }
    calls = {name: 0 for name in networks}

    def hook(name):
        def check(module, args, output):
            assert torch.is_inference_mode_enabled(), name
            calls[name] += 1

        return check

    handles = [net.register_forward_hook(hook(name)) for name, net in networks.items()]
    try:
        clips = [speech(TEXT), speech("One small step.", VOICE_B), speech("A giant leap.", VOICE_A)]
        ev.aesthetics.rate(clips)
        ev.speaker.embed(clips)
        ev.clap.score(["a", "b", "c"], clips)
        ev.mos[0].predict(clips)
    finally:
        for handle in handles:
            handle.remove()
    # one forward for the whole round (three short clips fit one batch); UTMOS has no padding mask,
    # so it scores clip by clip inside the same call
    assert calls["aesthetics"] == calls["speaker"] == 1 and calls["utmos"] == 3
    assert calls["clap"] == 1


def test_a_checkpoint_of_the_wrong_shape_or_a_missing_model_is_one_line(tmp_path, monkeypatch):
    import torch

    torch.save({"not": torch.zeros(1)}, tmp_path / "utmos_state_dict.pt")
    with pytest.raises(BackendError, match="does not fit the UTMOS architecture"):
        load_evaluator("mos", f"utmos:{tmp_path}", "cpu")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for kind, spec in (
        ("mos", "utmos:Blinorot/UTMOS-PyTorch"),
        ("aesthetics", "audiobox:facebook/audiobox-aesthetics"),
        ("mos", "utmos:/no/such/folder"),
    ):
        with pytest.raises(BackendError) as caught:
            load_evaluators({kind: spec}, device="cpu", warmup=False)
        assert "\n" not in str(caught.value)
        assert "not found locally and the hub is offline" in str(caught.value) or "does not exist" in str(caught.value)


def validator_args(*extra):
    from audionet.neurons.validator import build_parser

    return build_parser().parse_args(["--netuid", "16", "--subtensor.network", "finney", *extra])


def test_a_validator_on_a_real_network_refuses_offline_evaluators_unless_named():
    from audionet.neurons.validator import evaluator_specs

    assert evaluator_specs(validator_args()) == PROFILES["standard"]  # auto on finney
    with pytest.raises(ConfigError, match="--eval.clap none: offline evaluators on finney") as caught:
        evaluator_specs(validator_args("--eval.clap", "none"))
    assert "--eval.profile offline" in str(caught.value) and "\n" not in str(caught.value)
    assert evaluator_specs(validator_args("--eval.profile", "offline")) == PROFILES["offline"]
    assert evaluator_specs(validator_args("--eval.profile", "large"))["asr"] == "whisper:large-v3"


def test_the_validator_command_stops_with_one_line_before_touching_wallet_or_chain(tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "audionet.neurons.validator",
            "--netuid",
            "16",
            "--subtensor.network",
            "wss://entrypoint-finney.opentensor.ai:443",
            "--wallet.name",
            "nobody",
            "--wallet.path",
            str(tmp_path),
            "--eval.asr",
            "whisper:tiny.en",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, lines
    assert "--eval.asr whisper:tiny.en: offline evaluators" in lines[0]


def test_real_network_references_are_recordings_unless_synthesised_is_asked_for(tmp_path, monkeypatch):
    from audionet.lib.prompts import corpus
    from audionet.lib.prompts.references import SynthesisedReferences

    monkeypatch.setattr(corpus, "DEFAULT_DIR", str(tmp_path / "no-references-yet"))

    def sources(*flags, network="finney"):
        args = validator_args(*flags)
        return registry.sources_from_flags(args, ["vc"], real_network=is_real_network(network))["vc"]

    with pytest.raises(ConfigError, match="audionet-references fetch") as caught:
        sources()
    assert "\n" not in str(caught.value)
    assert isinstance(sources("--vc.synthesised", "--vc.reference_tts", "baseline:espeak"), SynthesisedReferences)
    offline = sources("--vc.reference_tts", "baseline:espeak", network="offline:chain.sqlite")
    assert isinstance(offline, SynthesisedReferences)  # offline chains keep synthesised references


def test_synthesised_references_draw_the_engine_first():
    """espeak has 18 voices and Kokoro 5: drawn by (engine, voice) pair espeak took 78% of the
    references; engine first, each engine gets half."""
    from audionet.lib.prompts.references import SynthesisedReferences

    class Engine:
        def __init__(self, name, voices):
            self.name, self.voices = name, voices

        def synthesize(self, text, voice=None, seed=0):
            from audionet.lib.core.audio import Audio

            return Audio(np.zeros(16_000, np.float32), 16_000)

    espeak, kokoro = Engine("espeak", [f"e{i}" for i in range(18)]), Engine("kokoro", [f"k{i}" for i in range(5)])
    references = SynthesisedReferences([(espeak, espeak.voices), (kokoro, kokoro.voices)])
    rng = np.random.default_rng(0)
    drawn = [references.draw(rng).name for _ in range(400)]
    share = sum(name.startswith("e") for name in drawn) / len(drawn)
    assert 0.42 < share < 0.58, share
