import base64
import json

import numpy as np
import pytest

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import (
    MAX_TEXT_CHARS,
    ResponseMeta,
    encode_request,
    pack_response,
    sha256_hex,
    unpack_response,
)
from audionet.lib.services import TTS, MusicRequest, TTSRequest, parse_request
from tests.conftest import tone
from tests.stress.texts import OVERLONG_TEXTS


def vc_body(reference: Audio, **extra) -> bytes:
    fields = {
        "text": "Say this.",
        "reference_text": "Reference words.",
        "seed": 1,
        "reference_flac_b64": base64.b64encode(encode_flac(reference)).decode(),
        **extra,
    }
    return json.dumps(fields).encode()


def test_valid_requests_round_trip():
    for request in (
        TTSRequest(text="Hello there.", seed=7, voice="en-us"),
        MusicRequest(prompt="calm piano", seconds=5.0, seed=3),
    ):
        assert parse_request(request.service, encode_request(request)) == request
    parsed = parse_request("vc", vc_body(tone(2.0)))
    assert parsed.reference().sample_rate == 16_000 and abs(parsed.reference().seconds - 2.0) < 1e-6
    assert parsed.reference() is parsed.reference()  # decoded once, reused by the backend


@pytest.mark.parametrize(
    "service, body, fragment",
    [
        ("tts", {"text": "x" * (MAX_TEXT_CHARS + 1)}, "'text'"),
        ("tts", {"text": "hi", "extra": 1}, "'extra'"),
        ("tts", {"text": "   "}, "'text'"),
        ("tts", {"text": "bell\x07"}, "'text'"),
        ("tts", {"text": "hi", "voice": "../../etc/passwd"}, "'voice'"),
        ("tts", {"text": "del\x7f and c1\x85"}, "'text'"),
        ("tts", {"text": "\u200b\u200f\u202e\u2066"}, "nothing to speak"),  # zero-width and bidi only
        ("tts", {"text": "...!? -- ;"}, "nothing to speak"),
        ("tts", {"text": "1,234,567,891 " * 28}, "more than 30 s to say; the limit is 30 s"),  # numbers in words
        ("tts", {"text": "hi", "seed": -1}, "'seed'"),
        ("tts", {"text": "hi", "seed": "5"}, "'seed'"),  # strict types: no string, float or boolean seed
        ("tts", {"text": "hi", "seed": 5.0}, "'seed'"),
        ("tts", {"text": "hi", "seed": True}, "'seed'"),
        ("music", {"prompt": "rock", "seconds": "5"}, "'seconds'"),
        ("music", {"prompt": "rock", "seconds": True}, "'seconds'"),
        ("music", {"prompt": "rock", "seconds": 31}, "'seconds'"),
        ("music", {"prompt": "rock", "seconds": 0.2}, "'seconds'"),
        ("music", {"prompt": "rock", "seconds": "NaN"}, "'seconds'"),
        ("vc", {"text": "a", "reference_text": "b", "reference_flac_b64": "!!!not-base64!!!"}, "base64"),
    ],
)
def test_limits_raise_one_line_wire_errors(service, body, fragment):
    with pytest.raises(WireError) as info:
        parse_request(service, json.dumps(body).encode())
    assert fragment in str(info.value) and "\n" not in str(info.value) and info.value.status == 400


@pytest.mark.parametrize("kind", list(OVERLONG_TEXTS))
def test_text_that_speaks_past_the_limit_is_refused_whatever_its_script(kind):
    """Issue 24: 400 CJK characters passed a check that counted characters, then spoke for 3 minutes."""
    bodies = {
        "tts": json.dumps({"text": OVERLONG_TEXTS[kind]}).encode(),
        "vc": vc_body(tone(2.0), text=OVERLONG_TEXTS[kind]),
    }
    for service, body in bodies.items():
        with pytest.raises(WireError, match="more than 30 s to say; the limit is 30 s") as info:
            parse_request(service, body)
        assert info.value.status == 400


def test_long_ordinary_text_still_fits():
    text = ("The quick brown fox jumps over the lazy dog, and the band plays on. " * 6)[:MAX_TEXT_CHARS]
    assert parse_request("tts", json.dumps({"text": text}).encode()).text == text


def test_oversized_body_is_413_and_unknown_service_404():
    with pytest.raises(WireError) as info:
        parse_request("tts", b" " * (TTS.max_request_bytes + 1))
    assert info.value.status == 413
    with pytest.raises(WireError) as info:
        parse_request("../admin", b"{}")
    assert info.value.status == 404


@pytest.mark.parametrize("seconds, fragment", [(0.5, "at least 1 s"), (25.0, "limit is 20 s")])
def test_vc_reference_length_is_bounded(seconds, fragment):
    with pytest.raises(WireError, match=fragment):
        parse_request("vc", vc_body(tone(seconds)))


def test_voice_clone_text_too_long_to_speak_is_refused_before_the_reference_is_decoded():
    with pytest.raises(WireError, match="the limit is 30 s") as info:
        parse_request("vc", vc_body(tone(2.0), text="1,234,567,891 " * 28, reference_flac_b64="bm90IGEgZmxhYw=="))
    assert info.value.status == 400


def test_a_ten_minute_reference_is_reported_as_what_it_claims_not_as_the_part_read():
    quiet = Audio(np.zeros(8_000 * 600, dtype=np.float32), 8_000)  # small as FLAC, long as audio
    with pytest.raises(WireError) as info:
        parse_request("vc", vc_body(quiet))
    assert str(info.value) == "audio is 600 s long; the limit is 20 s"


def test_response_body_round_trip_and_corruption():
    meta = ResponseMeta(
        service="tts",
        model="baseline:espeak",
        device="cpu",
        generation_s=0.5,
        seed=1,
        request_sha256=sha256_hex(b"req"),
    )
    flac = encode_flac(tone(1.0))
    body = pack_response(meta, flac)
    assert unpack_response(body) == (meta, flac)
    for broken, fragment in (
        (b"XXXX" + body[4:], "not an audionet"),
        (body[:4] + b"\xff\xff\xff\xff" + body[8:], "length"),
        (body[:8] + b"[" + body[9:], "metadata"),
    ):
        with pytest.raises(WireError, match=fragment):
            unpack_response(broken)


def test_binary_body_is_much_smaller_than_a_json_float_list():
    audio = Audio(np.random.default_rng(1).normal(0, 0.1, 32_000 * 15).clip(-1, 1), 32_000)
    meta = ResponseMeta(
        service="music", model="m", device="cpu", generation_s=1.0, seed=0, request_sha256=sha256_hex(b"")
    )
    ours = pack_response(meta, encode_flac(audio))
    anchor = json.dumps({"audio": audio.samples.tolist()}).encode()
    assert len(anchor) / len(ours) >= 10  # the wire benchmark reports the exact ratio


def test_json_from_the_wire_is_bounded_in_size_and_depth():
    """Issue 45: "[" * 5000 made json.loads raise RecursionError, which nothing caught."""
    from audionet.lib.core.protocol import MAX_JSON_DEPTH, json_depth, parse_json

    assert parse_json(b'{"a": [1, {"b": "]]]]"}]}', 100, "x") == {"a": [1, {"b": "]]]]"}]}
    nested = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert parse_json(nested, 1000, "x") is not None
    for bad, reason in (
        (b"[" * 5000, "nests deeper than 32 levels"),
        (b"{" * 5000, "nests deeper than 32 levels"),
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "nests deeper"),
        (b'"' + b'\\"' * 50_000, "is not JSON"),  # an unterminated string of escaped quotes: the scan stops at once
        (b"1" * 5000, "is not JSON"),  # past Python's digit limit for int()
        (b"\xff\xfe", "is not JSON"),
        (b"[]" * 60, "is 120 bytes; the limit is 100"),
    ):
        with pytest.raises(WireError, match=reason):
            parse_json(bad, 100 if reason.startswith("is 120") else 1_000_000, "the thing")
    assert json_depth(b'["[[[[", {"a": "\\"[["}]', 32) == 2  # brackets inside strings do not count


def test_a_miners_model_and_device_must_be_printable():
    meta = dict(service="tts", model="kokoro", device="cpu", generation_s=0.1, seed=1, request_sha256="a" * 64)
    assert ResponseMeta(**meta).model == "kokoro"
    for field, value in (("model", "kokoro\x1b[2K"), ("device", "cpu\nINFO set weights"), ("model", "a\u202eb")):
        body = pack_response(ResponseMeta.model_construct(**(meta | {field: value})), b"fLaC")
        with pytest.raises(WireError, match=f"invalid request field '{field}'.*printable"):
            unpack_response(body)
