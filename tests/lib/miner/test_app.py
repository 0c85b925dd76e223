import asyncio

import pytest
from starlette.requests import Request

from audionet.lib.core.auth import request_target
from audionet.lib.core.errors import WireError
from audionet.lib.miner.app import read_capped


def test_a_body_that_never_arrives_is_refused_with_408():
    async def never():  # a client that sent its head and then nothing
        await asyncio.Event().wait()

    request = Request({"type": "http", "method": "POST", "headers": [(b"content-length", b"10")]}, never)
    with pytest.raises(WireError) as info:
        asyncio.run(read_capped(request, 100, deadline_s=0.1))
    assert info.value.status == 408 and "did not arrive" in str(info.value)


def test_the_request_target_is_the_path_and_query_as_sent():
    scope = {"type": "http", "method": "POST", "path": "/v1/tts", "raw_path": b"/v1/tts", "query_string": b"a=1"}
    assert request_target(Request(scope)) == "/v1/tts?a=1"
    assert request_target(Request(scope | {"query_string": b""})) == "/v1/tts"
