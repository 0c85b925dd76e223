"""A real miner process on loopback, attacked with every btauth failure mode, with connections that prove
nothing, text that would speak for minutes, callers that leave, and an open-file limit of 1,024."""

import asyncio
import base64
import json
import os
import resource
import socket
import time

import bittensor as bt
import httpx
import pytest

from audionet.lib.core.auth import sign_request, verify_response
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import sha256_hex, unpack_response
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import LocalNet
from audionet.lib.services import TTS
from audionet.lib.validator.client import miner_health
from tests.gated import open_gate, started, wait_until
from tests.stress.common import log_since, log_size, raise_fd_limit
from tests.stress.texts import OVERLONG_TEXTS

pytestmark = pytest.mark.timeout(300)
FD_LIMIT = 1024  # a common default soft limit: the "fdlimit" miner inherits it


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    net = LocalNet(str(tmp_path_factory.mktemp("miner-http")))
    gates = str(tmp_path_factory.mktemp("gates"))
    net.add_validator()
    net.add_miner("open", extra_args=("--services", "tts,vc", "--miner.max_waiting", "2"))
    net.add_miner("strict", extra_args=("--services", "tts", "--miner.rate_limit", "2"))
    os.environ["AUDIONET_GATES"] = gates  # the gated miner's backend waits at gates in this folder
    net.add_miner(
        "gated", extra_args=("--services", "tts", "--tts.model", "py:tests.gated:gated", "--miner.max_waiting", "2")
    )
    del os.environ["AUDIONET_GATES"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(FD_LIMIT, soft), hard))
    try:
        net.add_miner("fdlimit", extra_args=("--services", "tts"))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    net.gates = gates
    try:
        net.wait_ready()
        yield net
    finally:
        net.stop()


def miner_named(net, name):
    return next(miner for miner in net.miners if miner.name == name)


def details(net, miner) -> dict:
    """The signed /v1/health of `miner`, asked by the localnet's validator."""
    return miner_health(f"http://127.0.0.1:{miner.port}", wallet(net, "validator"), miner.hotkey)


def wallet(net, name):
    return create_wallet(name, "default", net.wallets)


def post(miner, path, body, headers):
    return httpx.post(f"http://127.0.0.1:{miner.port}{path}", content=body, headers=headers, timeout=60)


def test_signed_request_gets_signed_audio(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    body = json.dumps({"text": "Signed requests only, please.", "seed": 5}).encode()
    response = post(miner, "/v1/tts", body, sign_request(validator, "/v1/tts", body, miner.hotkey))
    assert response.status_code == 200, response.text
    verify_response(
        response.headers,
        response.content,
        "/v1/tts",
        miner_hotkey=miner.hotkey,
        self_hotkey=validator.hotkey.ss58_address,
        nonce_store=bt.http_auth.InMemoryNonceStore(),
    )
    meta, flac = unpack_response(response.content)
    audio = TTS.decode_answer(flac)
    assert meta.request_sha256 == sha256_hex(body) and meta.model == "baseline:espeak" and meta.seed == 5
    assert audio.sample_rate == 22_050 and 1.0 < audio.seconds < 6.0


def test_every_auth_failure_is_a_clean_status_and_the_miner_keeps_serving(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    body = json.dumps({"text": "Hello.", "seed": 1}).encode()
    good = lambda: sign_request(validator, "/v1/tts", body, miner.hotkey)  # noqa: E731
    flipped = good()
    sig = flipped["X-Bittensor-Signature"]
    flipped["X-Bittensor-Signature"] = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    stale = bt.http_auth.sign(
        validator,
        method="POST",
        path="/v1/tts",
        body=body,
        receiver_ss58=miner.hotkey,
        nonce_ns=time.time_ns() - 60 * 10**9,
    )
    replayed = good()
    assert post(miner, "/v1/tts", body, replayed).status_code == 200
    cases = {
        "unsigned": (body, {}, 401),
        "bad signature": (body, flipped, 401),
        "wrong receiver": (body, sign_request(validator, "/v1/tts", body, validator.hotkey.ss58_address), 401),
        "stale": (body, stale, 401),
        "replayed": (body, replayed, 401),
        "tampered body": (body.replace(b"Hello", b"Hellp"), good(), 401),
        "wrong path": (body, sign_request(validator, "/v1/vc", body, miner.hotkey), 401),
        "unregistered": (body, sign_request(wallet(net, "stranger"), "/v1/tts", body, miner.hotkey), 403),
        "no permit": (body, sign_request(wallet(net, "strict"), "/v1/tts", body, miner.hotkey), 403),
    }
    start, reasons = log_size(miner.log_path), {}
    for name, (payload, headers, status) in cases.items():
        response = post(miner, "/v1/tts", payload, headers)
        assert response.status_code == status, f"{name}: {response.status_code} {response.text}"
        assert "\n" not in response.json()["error"], name
        reasons.setdefault(status, response.json()["error"])
    assert post(miner, "/v1/tts", body, good()).status_code == 200
    # the miner logs each refusal with the reason its caller received, one line per path and status a minute
    new = log_since(miner.log_path, start).splitlines()
    for status, reason in reasons.items():
        lines = [line for line in new if f"refused POST /v1/tts with {status}: " in line]
        assert len(lines) == 1 and f"with {status}: {reason} (from 127.0.0.1)" in lines[0], new


def test_hostile_bodies_are_refused_before_work(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    huge = b"x" * (TTS.max_request_bytes + 1)
    response = post(miner, "/v1/tts", huge, sign_request(validator, "/v1/tts", huge, miner.hotkey))
    assert response.status_code == 413
    for body, fragment in (
        (b'{"text": ', "Invalid JSON"),
        (b'{"text": "hi", "voice": "../../../etc/passwd"}', "'voice'"),
        (json.dumps({"text": "1,234,567,891 " * 28}).encode(), "the limit is 30 s"),  # numbers in words
        (json.dumps({"text": "\u200b\u202e...!?"}).encode(), "nothing to speak"),
        (b'{"text": "hi", "seed": "5"}', "'seed'"),
        (
            json.dumps(
                {
                    "text": "a",
                    "reference_text": "b",
                    "seed": 1,
                    "reference_flac_b64": base64.b64encode(b"RIFF" + b"\0" * 400).decode(),
                }
            ).encode(),
            "not a FLAC",
        ),
    ):
        path = "/v1/vc" if b"reference" in body else "/v1/tts"
        response = post(miner, path, body, sign_request(validator, path, body, miner.hotkey))
        assert response.status_code == 400 and fragment in response.json()["error"], response.text
    assert details(net, miner)["services"]["tts"]["served"] >= 1


def test_only_accepted_requests_count_toward_the_rate_limit(net):
    validator, miner = wallet(net, "validator"), net.miners[1]
    for index in range(2):  # signed but malformed: 400 each, given back (up to the limit of 2 a minute)
        body = json.dumps({"text": index, "seed": index}).encode()
        response = post(miner, "/v1/tts", body, sign_request(validator, "/v1/tts", body, miner.hotkey))
        assert response.status_code == 400, response.text
    statuses = []
    for index in range(3):
        body = json.dumps({"text": f"Number {index}.", "seed": index}).encode()
        headers = sign_request(validator, "/v1/tts", body, miner.hotkey)
        statuses.append(post(miner, "/v1/tts", body, headers).status_code)
    assert statuses == [200, 200, 429]


def test_the_signature_binds_the_query_string(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    body = json.dumps({"text": "With a query string.", "seed": 2}).encode()
    signed = sign_request(validator, "/v1/tts?lang=en", body, miner.hotkey)
    assert post(miner, "/v1/tts?lang=en", body, signed).status_code == 200
    response = post(miner, "/v1/tts?lang=en", body, sign_request(validator, "/v1/tts", body, miner.hotkey))
    assert response.status_code == 401, response.text


def test_a_client_that_leaves_mid_body_is_one_log_line(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    with open(miner.log_path, "rb") as handle:
        start = len(handle.read())
    body = json.dumps({"text": "Never finished.", "seed": 3}).encode()
    headers = sign_request(validator, "/v1/tts", body, miner.hotkey) | {"Content-Length": str(len(body))}
    head = "POST /v1/tts HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(("127.0.0.1", miner.port)) as client:
        client.sendall(head.encode() + b"\r\n" + body[:5])
    deadline = time.monotonic() + 30
    while True:
        with open(miner.log_path, "rb") as handle:
            new = handle.read()[start:].decode(errors="replace")
        if "disconnected" in new or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert new.count("disconnected before sending the whole request") == 1, new
    assert "Traceback" not in new and len(new.splitlines()) == 1, new


def test_a_request_answered_before_a_restart_is_not_answered_again(net):
    validator, miner = wallet(net, "validator"), net.miners[0]
    body = json.dumps({"text": "Only once, please.", "seed": 4}).encode()
    headers = sign_request(validator, "/v1/tts", body, miner.hotkey)
    assert post(miner, "/v1/tts", body, headers).status_code == 200
    net.restart_miner(miner)  # kill -9, then the same flags
    net.wait_ready()
    # Refused however long the restart took: as signed before this process started, or as stale after 10 s.
    response = post(miner, "/v1/tts", body, headers)
    assert response.status_code == 401 and "authentication failed" in response.text, response.text
    # The restart rule itself, whatever the restart's length: a nonce just before the new process started
    # is still fresh, and refused only because no process alive can know whether it was answered.
    started_ns = details(net, miner)["started_ns"]
    before_start = bt.http_auth.sign(
        validator, method="POST", path="/v1/tts", body=body, receiver_ss58=miner.hotkey, nonce_ns=started_ns - 10**6
    )
    response = post(miner, "/v1/tts", body, before_start)
    assert response.status_code == 401 and "signed before this miner started" in response.text, response.text
    fresh = sign_request(validator, "/v1/tts", body, miner.hotkey)
    assert post(miner, "/v1/tts", body, fresh).status_code == 200


def test_overload_is_refused_with_503_and_nothing_is_lost(net):
    import asyncio

    from audionet.lib.core.audio import encode_flac
    from audionet.models.baselines.espeak import EspeakSynthesizer

    validator, miner = wallet(net, "validator"), net.miners[0]
    clip = EspeakSynthesizer().synthesize("A reference voice for cloning.", voice="en-gb+f3")
    reference = base64.b64encode(encode_flac(clip)).decode()

    async def burst():
        async with httpx.AsyncClient(timeout=120) as client:

            async def one(index):
                body = json.dumps(
                    {
                        "text": f"Request number {index} of the burst.",
                        "seed": index,
                        "reference_text": "A reference voice for cloning.",
                        "reference_flac_b64": reference,
                    }
                ).encode()
                headers = sign_request(validator, "/v1/vc", body, miner.hotkey)
                return await client.post(f"http://127.0.0.1:{miner.port}/v1/vc", content=body, headers=headers)

            return await asyncio.gather(*(one(i) for i in range(10)))

    statuses = sorted(r.status_code for r in asyncio.run(burst()))
    assert set(statuses) == {200, 503} and statuses.count(200) >= 3, statuses  # 1 running + 2 waiting at least
    health = details(net, miner)["services"]["vc"]
    assert health["busy"] == 0 and health["waiting"] == 0


def served_despite(net, miner, crowd, text: str) -> None:
    """Open the sockets `crowd` yields; meanwhile the validator's signed TTS request must get a 200. The crowd
    is closed afterwards, whatever happened. The validator has called this miner before (as validators do every
    round), so the miner knows its address: a first contact in the moment a crowd of fresh connections has just
    arrived is turned away until they idle (docs/reliability.md)."""
    validator, held = wallet(net, "validator"), []
    body = json.dumps({"text": "Called before.", "seed": 5}).encode()
    assert post(miner, "/v1/tts", body, sign_request(validator, "/v1/tts", body, miner.hotkey)).status_code == 200
    try:
        held.extend(crowd)
        body = json.dumps({"text": text, "seed": 6}).encode()
        response = post(miner, "/v1/tts", body, sign_request(validator, "/v1/tts", body, miner.hotkey))
        assert response.status_code == 200, response.text
    finally:
        for sock in held:
            sock.close()


def test_a_thousand_idle_connections_do_not_stop_honest_requests(net):
    """1,000 idle or half-headed connections from four other loopback addresses: each address keeps 64 of them
    (the per-address cap turns the rest away) and an honest client, which sends its head at once, is served. The
    soft open-file limit is raised for this process if 1,000 sockets need it."""
    miner = net.miners[0]
    raise_fd_limit(1200)
    start = log_size(miner.log_path)

    def crowd():
        for index in range(1000):
            sock = socket.create_connection(("127.0.0.1", miner.port), source_address=(f"127.3.0.{1 + index % 4}", 0))
            if index % 2:
                sock.sendall(b"POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # a head that never ends
            yield sock
        assert httpx.get(f"http://127.0.0.1:{miner.port}/v1/health", timeout=5).status_code == 200

    served_despite(net, miner, crowd(), "Served despite the crowd.")
    new = log_since(miner.log_path, start).splitlines()
    assert sum("holds 64 unverified connections" in line for line in new) == 1, new  # not one per connection
    assert len(new) <= 4, new


def head_only(port: int, index: int, hotkey: str) -> socket.socket:
    """Issue 24's keyless attack: a head that names a validator's (public) hotkey and promises a body that never
    comes, from one of 250 loopback addresses (all of 127.0.0.0/8 is loopback on Linux)."""
    sock = socket.socket()
    sock.bind((f"127.1.{index // 250 % 250}.{1 + index % 250}", 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        f"POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-Bittensor-Hotkey: {hotkey}\r\nContent-Length: 1000\r\n\r\n".encode()
    )
    return sock


def test_connections_that_claim_a_validator_hotkey_and_send_no_body_cannot_lock_out_the_validator(net):
    """More head-only connections than the connection cap (512): each claims the validator's hotkey, which no
    longer earns them anything, so they stay in the budget for unverified connections and the signed request
    of the real validator is served."""
    miner, hotkey = net.miners[0], wallet(net, "validator").hotkey.ss58_address
    raise_fd_limit(1500)
    served_despite(net, miner, (head_only(miner.port, i, hotkey) for i in range(700)), "Still served under the flood.")


@pytest.mark.parametrize("kind", list(OVERLONG_TEXTS))
def test_text_that_would_speak_past_the_limit_is_a_400_before_generation_whatever_the_script(net, kind):
    validator, miner = wallet(net, "validator"), net.miners[0]
    body = json.dumps({"text": OVERLONG_TEXTS[kind], "seed": 1}).encode()
    response = post(miner, "/v1/tts", body, sign_request(validator, "/v1/tts", body, miner.hotkey))
    assert response.status_code == 400, response.text
    assert "the limit is 30 s" in response.json()["error"] and "\n" not in response.text


def test_a_waiter_whose_client_leaves_gives_its_place_back_and_is_never_generated(net):
    """Issue 24: callers that left still showed as waiting, a new caller of equal stake got 503, and the
    abandoned requests were generated anyway."""
    validator, miner = wallet(net, "validator"), miner_named(net, "gated")

    def send(word: str) -> socket.socket:
        body = json.dumps({"text": f"{word} is waiting.", "seed": 1}).encode()
        headers = sign_request(validator, "/v1/tts", body, miner.hotkey) | {"Content-Length": str(len(body))}
        head = "POST /v1/tts HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock = socket.create_connection(("127.0.0.1", miner.port))
        sock.sendall(head.encode() + b"\r\n" + body)
        return sock

    holder = send("holder")
    wait_until(lambda: started(net.gates) == ["holder"], what="the first request to start")
    leavers = [send("leaver"), send("quitter")]
    wait_until(lambda: details(net, miner)["services"]["tts"]["waiting"] == 2, what="two waiters")
    for sock in leavers:
        sock.close()
    wait_until(lambda: details(net, miner)["services"]["tts"]["waiting"] == 0, timeout_s=10, what="the places freed")
    newcomer = send("newcomer")  # equal stake: with the leavers still counted, the line would be full (503)
    wait_until(lambda: details(net, miner)["services"]["tts"]["waiting"] == 1, what="the newcomer to wait")
    open_gate(net.gates)
    for sock in (holder, newcomer):
        sock.settimeout(60)
        assert sock.recv(12) == b"HTTP/1.1 200", "a request that stayed was not served"
        sock.close()
    assert started(net.gates) == ["holder", "newcomer"]  # the leavers were never generated


def test_public_health_is_liveness_only_and_the_details_need_a_signature(net):
    miner = net.miners[0]
    url = f"http://127.0.0.1:{miner.port}"
    assert httpx.get(f"{url}/v1/health", timeout=5).json() == {"status": "ok"}
    shown = details(net, miner)
    assert shown["hotkey"] == miner.hotkey
    validator = shown["places"]["callers"][wallet(net, "validator").hotkey.ss58_address]
    assert validator["share"] == 1.0 and validator["connections"] >= 1  # the connection that asked: its own
    assert set(validator) == {"share", "connections", "parsing", "waiting", "generating"}
    assert shown["places"]["limits"]["connections"] == 512 and "unverified" in shown["places"]
    with pytest.raises(WireError) as refused:
        miner_health(url, wallet(net, "stranger"), miner.hotkey)
    assert refused.value.status == 403
    with socket.create_connection(("127.0.0.1", miner.port)) as client:  # a 64 KB head in one send
        client.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 64_000 + b"\r\n\r\n")
        client.settimeout(10)
        assert client.recv(12) == b"HTTP/1.1 431"


def test_a_validator_reads_what_a_miner_serves_from_its_health_signed_back_to_it(net):
    """The validator asks each miner for the services its signed health names; a miner that is not the hotkey
    the validator expects there answers nothing it would believe."""
    from audionet.lib.validator.client import MinerClient, Target

    async def ask(miner, hotkey):
        async with httpx.AsyncClient() as http:
            client = MinerClient(wallet(net, "validator"), http)
            return await client.served(Target(miner.uid, hotkey, f"127.0.0.1:{miner.port}"), timeout=10)

    assert asyncio.run(ask(miner_named(net, "open"), miner_named(net, "open").hotkey)) == {"tts", "vc"}
    assert asyncio.run(ask(miner_named(net, "strict"), miner_named(net, "strict").hotkey)) == {"tts"}
    assert asyncio.run(ask(miner_named(net, "open"), miner_named(net, "strict").hotkey)) is None


def test_a_burst_of_connections_stays_inside_an_open_file_limit_of_1024(net):
    """Issue 24: with a soft limit of 1,024 a burst overshot the cap; accepting failed with "Too many open
    files" (a traceback each time). The miner accepts in batches its open-file room is sized for."""
    miner = miner_named(net, "fdlimit")
    raise_fd_limit(2000)
    start = log_size(miner.log_path)

    def burst():
        for index in range(1500):
            sock = socket.socket()
            sock.setblocking(False)
            sock.bind((f"127.2.{index // 250}.{1 + index % 250}", 0))
            sock.connect_ex(("127.0.0.1", miner.port))
            yield sock

    served_despite(net, miner, burst(), "Served after the burst.")
    new = log_since(miner.log_path, start)
    assert "Too many open files" not in new and "Traceback" not in new, new
