"""The rest of issue 37: generation at the length limit (Kokoro; espeak-ng over every voice and seed), text that
speaks as silence, the minor findings (a head with bare LF line endings, chunked trailers, a FLAC that does not
say its length, a reference just under 1 s), and the miner's memory over 10,000 requests."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections import Counter

import httpx

from audionet.lib.core.audio import Audio, encode_flac
from audionet.lib.core.auth import sign_request
from audionet.lib.core.errors import WireError
from audionet.lib.services import TTS
from audionet.lib.services.base import check_speakable
from audionet.models.baselines.espeak import VOICES
from tests.stress.common import LiveMiner, post_signed, rss_mb
from tests.stress.hostile import tone, with_streaminfo
from tests.stress.texts import SILENT_UNITS, fill
from tests.stress.wan import PlacesWatch

LIMIT_UNITS = {"CJK": "这是一个测试句子", "symbols": "a §¶©®™ ", "Roman numerals": "MMMDCCCLXXXVIII ", "digits": "8 "}
SILENT_TEXTS = {
    "fullwidth digits": "１２３４５６７８９０",
    "circled numbers": "①②③④⑤⑥⑦⑧⑨⑩",
    "Arabic-Indic digits": "٠١٢٣٤٥٦٧٨٩",
}


def longest_accepted(unit: str) -> str:
    """The longest text made of `unit` that the length check lets through (binary search)."""
    low, high = 1, len(fill(unit))
    while low < high:
        middle = (low + high + 1) // 2
        try:
            check_speakable(fill(unit)[:middle].strip(), TTS.max_seconds)
            low = middle
        except WireError:
            high = middle - 1
    return fill(unit)[:low].strip()


def tts_body(text: str, seed: int, voice=None) -> bytes:
    return json.dumps({"text": text, "seed": seed} | ({"voice": voice} if voice else {})).encode()


def run_at_the_limit(live: LiveMiner, wallet, watch_wallet, probes: int = 3) -> dict:
    """Hole 5 on a Kokoro miner: the longest texts the check accepts, from the low-stake validator, one after
    another; meanwhile the top validator's TTS requests. Every answer within the timeout, none a 500, and no
    generation that outlives the timeout."""
    warm = post_signed(live, live.callers["top"], "/v1/tts", tts_body("It has served before.", 899))
    watch = PlacesWatch(live.url, watch_wallet, live.miner.hotkey)
    watch.start()
    texts = {kind: longest_accepted(unit) for kind, unit in LIMIT_UNITS.items()}
    probe_results: list = []

    def probe() -> None:
        for i in range(probes):
            body = tts_body(f"The top validator asks for sentence {i}.", 900 + i)
            probe_results.append(post_signed(live, live.callers["top"], "/v1/tts", body, TTS.timeout_s))

    prober = threading.Thread(target=probe)
    prober.start()
    answers = {}
    for kind, text in texts.items():
        status, seconds = post_signed(live, wallet, "/v1/tts", tts_body(text, 1), TTS.timeout_s + 30)
        answers[kind] = {"chars": len(text), "status": str(status), "seconds": round(seconds, 2)}
    prober.join()
    watch.stop()
    return {
        "timeout_s": TTS.timeout_s,
        "warm": str(warm[0]),
        "texts": answers,
        "probes": probes,
        "probes_served": sum(status == 200 for status, _ in probe_results),
        "probe_max_s": max((s for _, s in probe_results), default=None),
        "longest_s": watch.longest.get(TTS.name),
        "alive": live.alive(),
    }


def run_voices_and_seeds(live: LiveMiner, wallet, seeds: int = 5) -> dict:
    """Hole 5 on espeak-ng: a text at the limit (at its fastest rate) in every voice with `seeds` seeds (slower
    rates): none may come back longer than the answer limit or as a 500."""
    text = longest_accepted(LIMIT_UNITS["CJK"])
    statuses: Counter = Counter()
    slowest = 0.0
    for voice in sorted(VOICES):
        for seed in range(seeds):
            status, seconds = post_signed(live, wallet, "/v1/tts", tts_body(text, seed, voice), TTS.timeout_s + 5)
            statuses[str(status)] += 1
            slowest = max(slowest, seconds)
    return {"pairs": len(VOICES) * seeds, "statuses": dict(statuses), "slowest_s": round(slowest, 2)}


def run_silence(live: LiveMiner, wallet) -> dict:
    """Hole 7: text that espeak-ng says nothing for: a 400 (given back), never a 500."""
    out = {}
    for kind, unit in SILENT_UNITS.items():
        status, _ = post_signed(live, wallet, "/v1/tts", tts_body(fill(unit), 3))
        out[kind] = str(status)
    return out


def raw_exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and answer.split(b"\r\n\r\n", 1)[1].endswith(b"}"):
                break
    return answer


def run_minor(live: LiveMiner, wallet) -> dict:
    """Hole 9: a signed voice clone in one send with bare LF line endings; a chunked body with 20 KB of trailers;
    a reference FLAC whose header says total_samples 0; a reference 0.9995 s long."""
    clip = tone(2.0)
    reference = base64.b64encode(encode_flac(clip)).decode()
    body = json.dumps(
        {"text": "Bare line feeds.", "reference_text": "A tone.", "reference_flac_b64": reference, "seed": 1}
    ).encode()
    headers = sign_request(wallet, "/v1/vc", body, live.miner.hotkey) | {"Content-Length": str(len(body))}
    head = "POST /v1/vc HTTP/1.1\nHost: x\n" + "".join(f"{k}: {v}\n" for k, v in headers.items()) + "\n"
    lf = raw_exchange(live.miner.port, head.encode() + body)[:12].decode(errors="replace")
    chunked = b"POST /v1/tts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"
    chunked += b"".join(b"X-T%d: %s\r\n" % (i, b"a" * 100) for i in range(200)) + b"\r\n"
    trailers = raw_exchange(live.miner.port, chunked)[:12].decode(errors="replace")
    messages = {}
    for kind, flac in (
        ("total_samples 0", with_streaminfo(encode_flac(clip), total=0)),
        ("0.9995 s", encode_flac(Audio(clip.samples[: int(clip.sample_rate * 0.9995)], clip.sample_rate))),
    ):
        body = json.dumps(
            {"text": "Say it.", "reference_text": "A tone.", "reference_flac_b64": base64.b64encode(flac).decode()}
        ).encode()
        response = httpx.post(
            f"{live.url}/v1/vc", content=body, headers=sign_request(wallet, "/v1/vc", body, live.miner.hotkey)
        )
        messages[kind] = f"{response.status_code} {response.json().get('error', '')}"[:160]
    return {"bare_lf_voice_clone": lf, "chunked_trailers_20kb": trailers, "references": messages}


def run_memory(live: LiveMiner, wallet, requests: int = 10_000, every: int = 1_000, workers: int = 1) -> dict:
    """RSS of the miner over `requests` signed TTS requests (`workers` at a time: one caller holds only its share
    of the line), sampled every `every`: the growth per request in the first and the second half tells a leak
    (it keeps on) from a heap settling."""
    counter = iter(range(requests))
    lock, samples, statuses = threading.Lock(), [], Counter()

    def work() -> None:
        with httpx.Client(base_url=live.url, timeout=60) as client:
            for index in iter(lambda: next(counter, None), None):
                body = tts_body(f"Request number {index % 500} of the long run.", index)
                headers = sign_request(wallet, "/v1/tts", body, live.miner.hotkey)
                status = client.post("/v1/tts", content=body, headers=headers).status_code
                with lock:
                    statuses[status] += 1
                    done = sum(statuses.values())
                    if done % every == 0:
                        samples.append((done, rss_mb(live.pid)))

    for index in range(200):  # warm: the first requests fill caches and pools
        post_signed(live, wallet, "/v1/tts", tts_body(f"Warm up {index}.", index))
    samples.append((0, rss_mb(live.pid)))
    started = time.perf_counter()
    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    samples.sort()
    done = [n for n, _ in samples]
    rss = [mb for _, mb in samples]
    half = len(samples) // 2
    per_request = lambda a, b: (rss[b] - rss[a]) * 1024 / max(1, done[b] - done[a])  # noqa: E731
    return {
        "requests": requests,
        "seconds": time.perf_counter() - started,
        "statuses": {str(k): v for k, v in statuses.items()},
        "rss_mb": [round(v, 1) for v in rss],
        "at": done,
        "growth_mb": round(rss[-1] - rss[0], 1),
        "kb_per_request_first_half": round(per_request(0, half), 3),
        "kb_per_request_second_half": round(per_request(half, len(rss) - 1), 3),
    }
