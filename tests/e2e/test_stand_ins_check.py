"""Every generation family's tiny random-weight stand-in, served by a real miner, answers what a validator asks:
`audionet-miner check` draws the validator's own prompts (its texts, 4-10 s of music, its voice references) and
judges the answers with the validator's Judge. No answer is refused and none is gated as silent. Random weights say
no words, so the gates that listen for speech may fire: those are the weights', not the wiring's.

The families are spread over a few miners (one model per service each); the check holds answers to longer timeouts
than a validator's, since every miner here shares the same 2 cores."""

import re

import pytest

from audionet.lib.localnet import LocalNet
from audionet.lib.services import registry
from audionet.models.random_weights import random_spec
from audionet.neurons.miner import main as miner_main

pytestmark = pytest.mark.timeout(1500)

FAMILIES = {  # service -> the published ids of the stand-ins that serve it
    "tts": [
        "hf:facebook/mms-tts-eng",
        "hf:microsoft/speecht5_tts",
        "hf:gradium/phonon-31m-en",
        "hf:bosonai/higgs-audio-v2-generation-3B-base",
        "hf:k2-fsa/OmniVoice",  # from the omnivoice package
        "hf:tts_models/en/ljspeech/vits",  # Coqui's VITS, from the coqui-tts package
    ],
    "vc": [
        "hf:nari-labs/Dia-1.6B-0626",
        "hf:sesame/csm-1b",
        "hf:vibevoice/VibeVoice-1.5B-hf",
        "hf:kyutai/pocket-tts",
        "hf:coqui/XTTS-v2",  # through --vc.model, from the coqui-tts package
        "f5-tts:SWivid/F5-TTS",  # from the f5-tts package
        "voxcpm:openbmb/VoxCPM2",  # from the voxcpm package
    ],
    "music": ["hf:facebook/musicgen-small", "hf:stabilityai/stable-audio-open-1.0", "hf:ACE-Step/Ace-Step1.5"],
}
MINERS = max(len(ids) for ids in FAMILIES.values())
TIMEOUT_S = "180"
CHECK = ["--check.answers", "2", "--check.seed", "3"]
CHECK += [arg for service in FAMILIES for arg in (f"--check.timeout.{service}", TIMEOUT_S)]
# the cheapest references: what the curve would pay random weights is not the point here
CHECK += [arg for s in registry.all_services() for arg in (f"--check.reference.{s.name}", s.default_backend)]
REFUSED_OR_SILENT = ("no valid answer", "no decodable audio", "mostly silent", "no answer within")


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("stand-ins"))
    net = LocalNet(str(tmp_path_factory.mktemp("stand-ins-check")))
    served = []
    for index in range(MINERS):
        models = {s: random_spec(ids[index], cache, size="tiny") for s, ids in FAMILIES.items() if index < len(ids)}
        flags = (
            "--services",
            ",".join(models),
            "--pool.devices",
            "cpu",
            "--dtype",
            "float32",
            "--music.preset",
            "fast",
        )
        served.append((net.add_miner(f"stand-ins-{index}", models=models, extra_args=flags), models))
    try:
        net.wait_ready(timeout=600)
        yield served
    finally:
        net.stop()


@pytest.mark.parametrize("index", range(MINERS))
def test_each_stand_in_answers_the_validators_prompts_audibly(net, index, capsys):
    miner, models = net[index]
    code = miner_main(["check", *miner.args, *CHECK])
    lines = capsys.readouterr().out.splitlines()
    # a warning where the shared cores made the health slower than a validator waits (a validator then asks for
    # every service); its services are the same
    served = f"health: signed by the miner; it serves {', '.join(sorted(models))}"
    assert re.fullmatch(rf"(ok  |warn) {served}( \(in .*)?", lines[2]), lines
    for service in models:
        verdict = next(line for line in lines if re.match(rf"(ok|warn|FAIL) +{service}: ", line))
        timing = next(line for line in lines if re.match(rf"(ok|warn|FAIL) +{service} time: ", line))
        assert not any(word in verdict or word in timing for word in REFUSED_OR_SILENT), (models[service], lines)
        assert f"{service}: 2 of 2 answers scored" in verdict or "answers gated" in verdict, lines
    assert code in (0, 1)  # 1: a gate for the random weights' speech fired, or they earn nothing under the curve
