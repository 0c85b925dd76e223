"""The scheduler plans a speech request with the length its check measured (issue 37: 44 CJK characters speak
for 28 s; their characters alone suggest 3)."""

import json

from audionet.lib.services import TTS, TTSRequest, parse_request
from tests.stress.texts import fill


def test_a_parsed_requests_planned_length_is_what_its_check_measured():
    text = fill("今天天气很好我们去公园散步")[:44]  # about 28 s for espeak-ng: inside the limit
    unparsed = TTSRequest(text=text)
    assert TTS.planned_seconds(unparsed) < 10  # never measured: its characters, and nothing measured on the loop
    parsed = parse_request("tts", json.dumps({"text": text}).encode())
    assert 25 < TTS.planned_seconds(parsed) <= 30.5
