"""Mutated and random bytes from the wire raise WireError and nothing else."""

import base64
import json

import numpy as np

from audionet.lib.core.audio import decode_flac, encode_flac
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ResponseMeta, encode_request, pack_response, sha256_hex, unpack_response
from audionet.lib.services import MusicRequest, TTSRequest, parse_request
from tests.conftest import tone


def mutations(seed: bytes, rng: np.random.Generator, count: int):
    for _ in range(count):
        data = bytearray(seed)
        kind = rng.integers(4)
        if kind == 0 and data:  # flip bytes
            for index in rng.integers(0, len(data), size=int(rng.integers(1, 8))):
                data[index] = int(rng.integers(256))
        elif kind == 1:  # truncate
            data = data[: int(rng.integers(0, len(data) + 1))]
        elif kind == 2:  # splice random bytes in
            at = int(rng.integers(0, len(data) + 1))
            data[at:at] = rng.bytes(int(rng.integers(1, 64)))
        else:  # pure noise
            data = bytearray(rng.bytes(int(rng.integers(0, 256))))
        yield bytes(data)


def survives(function, data) -> bool:
    try:
        function(data)
    except WireError as error:
        return "\n" not in str(error)
    return True


def test_request_parser_only_raises_wire_errors():
    rng = np.random.default_rng(0)
    reference = base64.b64encode(encode_flac(tone(1.5))).decode()
    seeds = {
        "tts": encode_request(TTSRequest(text="Hello there, friend.", voice="en-us", seed=4)),
        "music": encode_request(MusicRequest(prompt="calm piano", seconds=4.0, seed=2)),
        "vc": json.dumps(
            {"text": "Hi.", "reference_text": "Ref.", "seed": 1, "reference_flac_b64": reference}
        ).encode(),
    }
    for service, seed in seeds.items():
        for data in mutations(seed, rng, 400):
            assert survives(lambda body, s=service: parse_request(s, body), data), (service, data[:80])


def test_response_and_audio_decoders_only_raise_wire_errors():
    rng = np.random.default_rng(1)
    flac = encode_flac(tone(1.0))
    meta = ResponseMeta(
        service="tts", model="m", device="cpu", generation_s=0.1, seed=0, request_sha256=sha256_hex(b"")
    )
    body = pack_response(meta, flac)
    for data in mutations(body, rng, 400):
        assert survives(unpack_response, data)
    for data in mutations(flac, rng, 400):
        assert survives(lambda d: decode_flac(d, max_seconds=5, max_bytes=10**6), data)
