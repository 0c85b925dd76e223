"""A real miner process serving Kokoro TTS, the Kokoro clone and a tiny random-weight
MusicGen (loaded by path through hf:) answers signed requests end to end."""

import base64
import json

import bittensor as bt
import httpx
import pytest

from audionet.lib import services
from audionet.lib.core.audio import encode_flac
from audionet.lib.core.auth import sign_request, verify_response
from audionet.lib.core.devices import device_slug
from audionet.lib.core.protocol import sha256_hex, unpack_response
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import LocalNet
from audionet.lib.validator.client import miner_health
from audionet.models.random_weights import random_spec
from tests.stress.texts import OVERLONG_TEXTS

pytestmark = pytest.mark.timeout(400)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    music = random_spec("hf:facebook/musicgen-small", str(tmp_path_factory.mktemp("models")), size="tiny")
    net = LocalNet(str(tmp_path_factory.mktemp("miner-neural")))
    net.add_validator()
    net.add_miner(
        "neural",
        models={"tts": "kokoro:jf_alpha", "vc": "kokoro-clone:", "music": music},
        extra_args=("--pool.devices", "cpu", "--dtype", "float32", "--music.preset", "fast"),
    )
    try:
        net.wait_ready(timeout=300)
        yield net
    finally:
        net.stop()


def ask(net, service, payload):
    validator = create_wallet("validator", "default", net.wallets)
    miner = net.miners[0]
    path = f"/v1/{service}"
    body = json.dumps(payload).encode()
    response = httpx.post(
        f"http://127.0.0.1:{miner.port}{path}",
        content=body,
        headers=sign_request(validator, path, body, miner.hotkey),
        timeout=120,
    )
    assert response.status_code == 200, response.text
    verify_response(
        response.headers,
        response.content,
        path,
        miner_hotkey=miner.hotkey,
        self_hotkey=validator.hotkey.ss58_address,
        nonce_store=bt.http_auth.InMemoryNonceStore(),
    )
    meta, flac = unpack_response(response.content)
    assert (
        meta.request_sha256 == sha256_hex(body) and meta.device == device_slug("cpu") and meta.seed == payload["seed"]
    )
    return meta, services.get(service).decode_answer(flac)


def test_health_names_the_neural_models(net):
    miner, validator = net.miners[0], create_wallet("validator", "default", net.wallets)
    services = miner_health(f"http://127.0.0.1:{miner.port}", validator, miner.hotkey)["services"]
    assert services["tts"]["model"] == "kokoro-82m-int8:jf_alpha"
    assert services["vc"]["model"].startswith("kokoro-clone:")
    assert services["music"]["model"].endswith("musicgen-small-random-tiny")


def test_tts_vc_and_music_over_signed_http(net):
    meta, speech = ask(net, "tts", {"text": "Kokoro answers over signed HTTP.", "seed": 4})
    assert meta.model.startswith("kokoro") and speech.sample_rate == 24_000 and 1.0 < speech.seconds < 8.0
    reference = base64.b64encode(encode_flac(speech)).decode()
    meta, cloned = ask(
        net,
        "vc",
        {
            "text": "And now in a cloned voice.",
            "seed": 5,
            "reference_text": "Kokoro answers over signed HTTP.",
            "reference_flac_b64": reference,
        },
    )
    assert meta.model.startswith("kokoro-clone") and cloned.sample_rate == 22_050 and 1.0 < cloned.seconds < 8.0
    meta, music = ask(net, "music", {"prompt": "calm piano", "seconds": 3.0, "seed": 6})
    assert music.sample_rate == 32_000 and abs(music.seconds - 3.0) < 0.01


def test_kokoro_is_never_asked_to_speak_400_cjk_characters(net):
    """Issue 24: 100 s of Kokoro for 183 s of audio, then a 500. Now a 400 before generation."""
    validator, miner = create_wallet("validator", "default", net.wallets), net.miners[0]
    body = json.dumps({"text": OVERLONG_TEXTS["CJK"], "seed": 1}).encode()
    response = httpx.post(
        f"http://127.0.0.1:{miner.port}/v1/tts",
        content=body,
        headers=sign_request(validator, "/v1/tts", body, miner.hotkey),
        timeout=services.TTS.timeout_s,
    )
    assert response.status_code == 400 and "the limit is 30 s" in response.json()["error"], response.text
    state = miner_health(f"http://127.0.0.1:{miner.port}", validator, miner.hotkey)["services"]["tts"]
    assert state["busy"] == 0 and all(r["abandoned"] == 0 for r in state["replicas"])
