"""The holes of issue 37 as scenarios: under each attack, the top-stake validator runs full rounds (TTS, voice
clone and music at once) over a slow link (`wan.WanValidator`), while the operator watches every place held
(`wan.PlacesWatch`). Each scenario reports the top validator's complete rounds, what each validator held against
its share, every status the attacker got (a 500 among them is a failure), and the longest generation.

The subnet: the localnet's validator (stake 1000), the top validator (stake 2000) and low-stake validators
(stake 10 each), all with permits; attackers without a key come from other loopback addresses.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import httpx
import numpy as np

from audionet.lib.core.auth import sign_request
from audionet.lib.core.errors import WireError
from audionet.lib.core.wallet import create_wallet
from audionet.lib.services import TTS
from audionet.lib.validator.client import miner_health
from tests.gated import wait_until
from tests.stress import findings
from tests.stress.attackers import Churn, SocketCrowd, Streams, address
from tests.stress.common import LiveMiner, log_since, log_size, raise_fd_limit, start_live_miner
from tests.stress.texts import OVERLONG_TEXTS
from tests.stress.wan import PlacesWatch, WanValidator, reference_b64, round_figures

# One low-stake validator per attack (each with a rate limit of its own); tester: the findings' requests.
STAKES = {"top": 2000.0, "low": 10.0, "streamer": 10.0, "tester": 10.0}
TOP_SOURCE, LOW_SOURCE = "127.0.5.1", "127.0.6.1"
REFUSED_TTS = json.dumps({"text": "...", "seed": 1}).encode()  # nothing to speak: 400, refunded
HOLD_VC_HEAD = b"POST /v1/vc HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n"  # then signed headers, no body
PARTIAL_HEAD = b"POST /v1/tts HTTP/1.1\r\nHost: x\r\nX-Slow: "
HEALTH_PIPELINE = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n" * 50


def start(workdir: str, extra_args: tuple = ()) -> LiveMiner:
    """A miner serving TTS, voice clone and music, with the top and the low-stake validator registered."""
    return start_live_miner(workdir, ("--services", "tts,vc,music", *extra_args), callers=tuple(STAKES), stakes=STAKES)


def request_bytes(wallet, miner_hotkey: str, path: str, body: bytes) -> bytes:
    headers = sign_request(wallet, path, body, miner_hotkey) | {"Content-Length": str(len(body))}
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return head.encode() + body


def hog_payload(live: LiveMiner):
    """Hole 1: the low-stake validator's signed request that is refused (and given back), then at once a
    voice-clone head whose 2 MB body never comes, on the connection the refused request verified."""
    low, hotkey = live.callers["low"], live.miner.hotkey
    head = sign_request(low, "/v1/vc", b"x" * 2_000_000, hotkey)
    vc_head = HOLD_VC_HEAD + "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode() + b"\r\n"
    return lambda _index: request_bytes(low, hotkey, "/v1/tts", REFUSED_TTS) + vc_head


def cjk_text(number: int) -> bytes:
    return json.dumps({"text": OVERLONG_TEXTS["CJK"], "seed": number}).encode()


def attack_for(name: str, live: LiveMiner, size: dict):
    """The attacker thread of scenario `name`, not yet started."""
    port = live.miner.port
    if name == "verified_hog":
        return SocketCrowd(port, size["hog"], 60, 6, hog_payload(live))
    if name == "parse_stream":
        return Streams(live.url, live.callers["streamer"], live.miner.hotkey, "/v1/tts", cjk_text, size["streams"])
    if name == "partial_heads":
        return SocketCrowd(port, size["partial"], size["partial"], 2, lambda _i: PARTIAL_HEAD)
    if name == "churn":
        return Churn(port, size["churn_rate"])
    if name == "health_flood":
        return SocketCrowd(port, size["health"], size["health"], 3, lambda _i: HEALTH_PIPELINE, again=True)
    raise ValueError(name)


SCENARIOS = ("verified_hog", "parse_stream", "partial_heads", "churn", "health_flood")


def run_scenario(live: LiveMiner, name: str, rounds: int, size: dict, seed: int) -> dict:
    """The attack `name` against `live` while the top validator runs `rounds` full rounds."""
    raise_fd_limit(4096 + size.get("hog", 0) + size.get("partial", 0))
    reference = reference_b64()
    top = WanValidator(live.miner.port, live.miner.hotkey, live.callers["top"], TOP_SOURCE, np.random.default_rng(seed))
    warm = top.rounds(1, reference, first_seed=seed * 1000)  # it has been calling this miner: its address is known
    watch = PlacesWatch(live.url, miner_wallet(live), live.miner.hotkey)
    watch.start()
    attacker = attack_for(name, live, size)
    attacker.start()
    wait_until(attacker.in_place, timeout_s=120, what=f"the {name} attack in place")  # before the first probe round
    results = top.rounds(rounds, reference, first_seed=seed * 1000 + 1)
    first_contact = first_contact_rounds(live, reference, size, seed) if name == "churn" else None
    attack = attacker.stop()
    places = watch.stop()
    return {
        "warm_round": warm[0]["complete"],
        "top": round_figures(results),
        "attack": attack,
        "places": places,
        "longest_s": watch.longest,
        "first_contact": first_contact,
        "alive": live.alive(),
    }


FIRST_CONTACT_AT_ONCE = 3  # new validators running their rounds at the same time: within the line's places


def first_contact_rounds(live: LiveMiner, reference: str, size: dict, seed: int) -> dict:
    """Validators with little stake whose addresses this miner has never seen, each running two full rounds
    under the churn, FIRST_CONTACT_AT_ONCE at a time (hole 4: 60 of them at once got 0 of 120; 60 at once are
    also more than a line of 9 places serves, whatever the churn)."""
    count = size["first_contact"]
    validators = [
        WanValidator(
            live.miner.port,
            live.miner.hotkey,
            live.callers[f"wan{i}"],
            address(7, 100 + i),
            np.random.default_rng(seed + i),
        )
        for i in range(count)
        if f"wan{i}" in live.callers
    ]

    async def all_rounds():
        async def two(validator):
            return [await validator.full_round(seed * 1000 + 500 + n, reference) for n in range(2)]

        out = []
        for start in range(0, len(validators), FIRST_CONTACT_AT_ONCE):
            out += await asyncio.gather(*(two(v) for v in validators[start : start + FIRST_CONTACT_AT_ONCE]))
        return out

    per_validator = asyncio.run(all_rounds()) if validators else []
    rounds = [row for rows in per_validator for row in rows]
    # Issue 45's target: a new validator's rounds complete from its second round (its first verified request
    # makes its address known; the first round may lose the connections opened before it).
    return round_figures(rounds) | {
        "from_second_round": round_figures([row for rows in per_validator for row in rows[1:]])
    }


def admitted(live: LiveMiner, wallet) -> bool:
    """Whether the miner's access policy admits `wallet` (a signed /v1/health is answered): its metagraph has
    synced the registration. Asked from 127.0.0.1, so the first-contact addresses stay unseen."""
    try:
        miner_health(live.url, wallet, live.miner.hotkey)
    except (httpx.HTTPError, WireError):
        return False
    return True


def miner_wallet(live: LiveMiner):
    return create_wallet(live.miner.name, "default", live.net.wallets)


def run_burst(live: LiveMiner, count: int) -> dict:
    """Hole 8: the top validator's own burst of `count` TTS requests at once from its one (known) address."""

    async def burst() -> list:
        transport = httpx.AsyncHTTPTransport(local_address=TOP_SOURCE, limits=httpx.Limits(max_connections=count))
        async with httpx.AsyncClient(base_url=live.url, transport=transport, timeout=TTS.timeout_s) as client:

            async def one(index: int):
                body = json.dumps({"text": f"Burst request {index}.", "seed": index}).encode()
                headers = sign_request(live.callers["top"], "/v1/tts", body, live.miner.hotkey)
                try:
                    return str((await client.post("/v1/tts", content=body, headers=headers)).status_code)
                except httpx.HTTPError as error:
                    return type(error).__name__

            return await asyncio.gather(*(one(i) for i in range(count)))

    statuses = Counter(asyncio.run(burst()))
    return {
        "requests": count,
        "statuses": dict(statuses),
        "lost": count - sum(statuses[s] for s in ("200", "429", "503")),
    }


def run_holes(workdir: str, rounds: int, size: dict, extra_args: tuple = (), progress=print) -> dict:
    """Every scenario on one miner, then the findings that need no other miner (text that speaks as silence,
    espeak-ng's voices and seeds at the limit, the minor ones), then its log: tracebacks and whether it lives."""
    live = start(workdir, extra_args)
    try:
        for i in range(size["first_contact"]):
            wallet = create_wallet(f"caller-wan{i}", "default", live.net.wallets)
            live.net.chain.register(
                wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address, stake=10.0, validator_permit=True
            )
            live.callers[f"wan{i}"] = wallet
        if size["first_contact"]:  # the miner syncs the metagraph every 2 s (localnet): it admits them once synced
            last = live.callers[f"wan{size['first_contact'] - 1}"]
            wait_until(lambda: admitted(live, last), timeout_s=60, what="the miner admitting the new validators")
        log_start = log_size(live.miner.log_path)
        out: dict = {}
        for seed, name in enumerate(SCENARIOS, start=1):
            progress(f"issue 37: {name}")
            try:
                out[name] = run_scenario(live, name, rounds, size, seed)
            except Exception as error:  # reported, and fails its threshold; the others still run
                out[name] = {"error": f"{type(error).__name__}: {error}"[:500]}
        progress("issue 37: a burst from one address")
        out["burst"] = run_burst(live, size["burst"])
        progress("issue 37: silence, voices and seeds at the limit, the minor findings")
        tester = live.callers["tester"]
        out["silence"] = findings.run_silence(live, tester)
        out["voices"] = findings.run_voices_and_seeds(live, tester, size["seeds"])
        out["minor"] = findings.run_minor(live, tester)
        log = log_since(live.miner.log_path, log_start)
        out["miner"] = {"alive": live.alive(), "tracebacks": log.count("Traceback"), "log_lines": len(log.splitlines())}
        return out
    finally:
        live.net.stop()
