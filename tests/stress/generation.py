"""Generation under hostile input (issue 24): text that would speak past the limit, sent by a low-stake validator
while one with more stake is timed; a generation that outlives its timeout (abandoned, its slot freed); callers
that leave the line."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time

from audionet.lib.core.audio import encode_flac
from audionet.lib.core.auth import sign_request
from audionet.lib.services import TTS, VC
from audionet.lib.validator.client import miner_health
from audionet.models.baselines.espeak import EspeakSynthesizer
from tests.stress.common import LiveMiner, latency_figures, post_signed
from tests.stress.floods import validator_tts
from tests.stress.texts import OVERLONG_TEXTS

LONG_TEXT = ("The committee met again on Tuesday to review the plans for the new library and the park beside it. " * 4)[
    :380
]  # about 23 s of speech: inside the limit, longer than a short timeout on this CPU


def poll(condition, timeout_s: float = 60.0, interval_s: float = 0.05) -> float:
    """Seconds until `condition()` holds (raises after `timeout_s`)."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout_s:
            raise TimeoutError(f"not within {timeout_s:g} s")
        time.sleep(interval_s)
    return time.perf_counter() - started


def run_overlong(live: LiveMiner, low_stake: object, probes: int = 5) -> dict:
    """Each over-long text signed by the low-stake caller `low_stake`, one after another; meanwhile the
    validator (more stake) sends `probes` signed TTS requests."""
    results: dict = {}
    probe_results: list = []
    prober = threading.Thread(target=lambda: probe_results.extend(validator_tts(live, 300 + i) for i in range(probes)))
    prober.start()
    for kind, text in OVERLONG_TEXTS.items():
        body = json.dumps({"text": text, "seed": 1}).encode()
        started = time.perf_counter()
        status, _ = post_signed(live, low_stake, "/v1/tts", body)
        results[kind] = {"status": status, "seconds": time.perf_counter() - started}
    prober.join()
    return {
        "texts": results,
        "probes": probes,
        "probes_served": sum(status == 200 for status, _ in probe_results),
        "probe_latency": latency_figures([t for _, t in probe_results]),
        "timeout_s": TTS.timeout_s,
        "alive": live.alive(),
    }


def run_abandon(live: LiveMiner, timeout_s: float) -> dict:
    """A text inside the limit that takes longer than the miner's --miner.timeout.tts (`timeout_s`) to speak:
    the caller's answer, how soon the slot is free again, and the next request."""
    body = json.dumps({"text": LONG_TEXT, "seed": 2}).encode()
    status, seconds = post_signed(live, live.validator, "/v1/tts", body)
    freed_after = poll(lambda: live.queue(TTS.name)["busy"] == 0)
    after, after_s = validator_tts(live, 7)
    replicas = miner_health(live.url, live.validator, live.miner.hotkey)["services"][TTS.name]["replicas"]
    return {
        "timeout_s": timeout_s,
        "status": status,
        "answered_after_s": seconds,
        "slot_free_after_answer_s": freed_after,
        "next_status": after,
        "next_s": after_s,
        "abandoned": sum(r["abandoned"] for r in replicas),
    }


def vc_body(text: str, reference: str, seed: int) -> bytes:
    fields = {"text": text, "reference_text": "A reference voice for cloning.", "reference_flac_b64": reference}
    return json.dumps(fields | {"seed": seed}).encode()


def run_leavers(live: LiveMiner, leavers: int = 8, leave_after_s: float = 0.5) -> dict:
    """A long voice-clone request holds the slot; `leavers` more wait and their clients leave after
    `leave_after_s`; then a newcomer of equal stake. Issue 24: they stayed 'waiting', the newcomer got a 503,
    and all of them were generated anyway. Each leaver is signed by another validator of the same stake (one
    validator holds only its share of the line's places), as many as there are."""
    peers = [w for w in live.callers.values() if w is not live.validator and w is not live.callers.get("low")]
    leavers = min(leavers, len(peers))
    clip = EspeakSynthesizer().synthesize("A reference voice for cloning.", voice="en-gb+f3")
    reference = base64.b64encode(encode_flac(clip)).decode()

    def served() -> int:
        state = miner_health(live.url, live.validator, live.miner.hotkey)["services"][VC.name]
        return sum(r["served"] for r in state["replicas"])

    def send(body: bytes, wallet) -> socket.socket:
        headers = sign_request(wallet, "/v1/vc", body, live.miner.hotkey) | {"Content-Length": str(len(body))}
        head = "POST /v1/vc HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        sock = socket.create_connection(("127.0.0.1", live.miner.port))
        sock.sendall(head.encode() + b"\r\n" + body)
        return sock

    before = served()
    holder = threading.Thread(
        target=post_signed, args=(live, live.validator, "/v1/vc", vc_body(LONG_TEXT, reference, 1))
    )
    holder.start()
    poll(lambda: live.queue(VC.name)["busy"] == 1)
    sockets = [send(vc_body(f"Leaver number {i} waits.", reference, 10 + i), peers[i]) for i in range(leavers)]
    poll(lambda: live.queue(VC.name)["waiting"] == leavers)
    time.sleep(leave_after_s)
    for sock in sockets:
        sock.close()
    try:
        freed_s = poll(lambda: live.queue(VC.name)["waiting"] == 0, timeout_s=10.0)
    except TimeoutError:
        freed_s = None  # issue 24: they stayed in line
    waiting_after = live.queue(VC.name)["waiting"]
    # Of equal stake, and not the holder (whose one place of this line, its share, is generating): a leaver's.
    newcomer, _ = post_signed(live, peers[0], "/v1/vc", vc_body("The newcomer is served.", reference, 99))
    holder.join()
    poll(lambda: live.queue(VC.name) == {"busy": 0, "waiting": 0}, timeout_s=120.0)
    return {
        "leavers": leavers,
        "leave_after_s": leave_after_s,
        "waiting_zero_after_s": freed_s,
        "waiting_after_leaving": waiting_after,
        "newcomer_status": newcomer,
        "generated": served() - before,  # the holder and the newcomer only
    }
