import asyncio
import logging

import pytest
from starlette.requests import Request

from audionet.lib.core.auth import request_target
from audionet.lib.core.errors import WireError
from audionet.lib.miner.app import log_refusal, read_capped
from audionet.lib.miner.guard import log as connection_log
from audionet.lib.miner.server import LogThrottle


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


def test_a_refusal_is_one_line_with_its_reason_and_a_flood_of_them_one_line_per_kind(caplog):
    now = [0.0]
    throttle = LogThrottle(60.0, clock=lambda: now[0])  # what the miner installs (`server.throttle_logs`)
    scope = {"type": "http", "method": "POST", "path": "/v1/tts", "headers": [], "client": ("127.0.0.9", 5000)}
    connection_log.addFilter(throttle)
    try:
        with caplog.at_level(logging.WARNING, logger=connection_log.name):
            for _ in range(50):
                log_refusal(Request(scope), 401, "no hotkey header")
            log_refusal(Request(scope), 403, "hotkey is not registered")
            log_refusal(Request(scope | {"path": "/v1/vc"}), 401, "no hotkey header")
            now[0] = 61.0
            log_refusal(Request(scope), 401, "the nonce was already used")
    finally:
        connection_log.removeFilter(throttle)
    assert [record.getMessage() for record in caplog.records] == [
        "refused POST /v1/tts with 401: no hotkey header (from 127.0.0.9)",
        "refused POST /v1/tts with 403: hotkey is not registered (from 127.0.0.9)",
        "refused POST /v1/vc with 401: no hotkey header (from 127.0.0.9)",
        "refused POST /v1/tts with 401: the nonce was already used (from 127.0.0.9) (49 more like this in the last 60 s)",
    ]
