"""A fourth service, defined in this file alone: text -> tone (a sine whose pitch the text decides).

Registered here and nowhere else, it runs through every tool a real service does: a live
miner over signed HTTP on loopback, one validator round (scores, EMA, weights on the offline
chain), audionet-score and an audionet-bench quick run. Nothing outside this file names it:
that is what "a service is one unit" means.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from abc import abstractmethod
from contextlib import ExitStack, contextmanager
from typing import Literal, Optional

import numpy as np
import pytest
import soundfile as sf
from pydantic import Field, field_validator

from audionet.lib.core.audio import Audio
from audionet.lib.core.protocol import ServiceRequest, Text, printable
from audionet.lib.localnet import free_port
from audionet.lib.prompts import make_seed, make_sentence
from audionet.lib.scoring.declaration import Analysis, Judging, Part, Range
from audionet.lib.scoring.jobs import Expect
from audionet.lib.services import Prompt, Service, registered
from audionet.models.base import Backend

pytestmark = pytest.mark.timeout(600)
RATE = 16_000
WRONG_HZ = 1_500.0  # the lazy miner's one pitch, far above every honest target (200-500 Hz)


def pitch_of(text: str) -> float:
    """The pitch a text asks for: 200-500 Hz, from its characters."""
    return 200.0 + sum(map(ord, text)) % 300


class ToneRequest(ServiceRequest):
    service: Literal["tone"] = "tone"
    text: Text
    seconds: float = Field(ge=0.5, le=5.0, allow_inf_nan=False)

    _text = field_validator("text")(printable)


class ToneGenerator(Backend):
    """The backend interface of the tone service."""

    @abstractmethod
    def tone(self, text: str, seconds: float, *, seed: int = 0) -> Audio: ...

    def warmup(self) -> None:
        self.tone("warm up", 0.5)


class PureTone(ToneGenerator):
    model_id = "toy:pure-tone"

    def __init__(self, fixed_hz: Optional[float] = None):
        self.fixed_hz = fixed_hz

    def tone(self, text, seconds, *, seed=0):
        t = np.arange(int(seconds * RATE)) / RATE
        phase = (seed % 628) / 100.0  # seeded, so two answers are not the same samples
        return Audio(0.4 * np.sin(2 * np.pi * (self.fixed_hz or pitch_of(text)) * t + phase), RATE)


def honest(device="cpu"):
    return PureTone()


def lazy(device="cpu"):
    return PureTone(fixed_hz=WRONG_HZ)


def dominant_hz(audio: Audio) -> float:
    spectrum = np.abs(np.fft.rfft(audio.samples * np.hanning(len(audio.samples))))
    return float(np.argmax(spectrum) * audio.sample_rate / len(audio.samples))


def tone_pitch(evaluators, clips, timed) -> None:
    """The tone's own analysis: its dominant pitch, and how far it is from the pitch the text asks for."""
    with timed("pitch", [clip.audio for clip in clips]):
        for clip in clips:
            hz = dominant_hz(clip.audio)
            wanted = pitch_of(clip.expect.description)
            clip.measures.update(pitch_hz=hz, pitch_error_st=abs(12 * math.log2(max(hz, 1.0) / wanted)))


class TextToTone(Service):
    name = "tone"
    title = "Text To Tone"
    request_model = ToneRequest
    backend_interface = ToneGenerator
    default_backend = f"py:{__name__}:honest"
    offline_backend = f"py:{__name__}:honest"
    timeout_s = 10.0
    max_seconds = 5.0
    inputs = frozenset({"seconds"})
    seconds_range = (0.5, 5.0)
    text_help = "the words whose pitch the tone carries"
    judging = Judging(
        "tone",
        gates=("missing", "length", "silent", "clipped", "duplicate"),
        analyses=(Analysis("tone_pitch", tone_pitch),),
        parts=(Part("pitch_match", 1.0, {"pitch_error_st": Range(6.0, 0.0)}),),
    )
    metrics = (("pitch_hz", "Pitch (Hz)"),)

    def generate(self, backend, request):
        return backend.tone(request.text, request.seconds, seed=request.seed)

    def build(self, prompt: Prompt) -> ToneRequest:
        return ToneRequest(text=prompt.text, seconds=prompt.seconds or 2.0, seed=prompt.seed)

    def draw(self, rng, sources=None, *, seconds=None):
        seed = make_seed(rng)
        text = make_sentence(rng)[:80]
        return self.request(Prompt(text, seed=seed, seconds=round(seconds or float(rng.uniform(1.0, 3.0)), 2)))

    def expected_seconds(self, request):
        return 0.9 * request.seconds, 1.1 * request.seconds + 0.1

    def expect(self, request):
        return Expect(self.expected_seconds(request), description=request.text)


@pytest.fixture(scope="module")
def tone_service():
    with registered(TextToTone()) as service:
        yield service


@pytest.fixture(scope="module")
def judge():
    from audionet.lib.scoring.judge import Judge

    return Judge.load(devices="cpu")


@contextmanager
def serving(app, port: int):
    """A real uvicorn server on loopback in a thread, for as long as the block runs."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "miner did not start"
        time.sleep(0.05)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_service_defined_in_one_file_runs_through_miner_validator_and_weights(tone_service, judge, tmp_path, wallets):
    import httpx

    from audionet.lib.core.auth import AccessPolicy, sign_request
    from audionet.lib.core.chain import OfflineChain
    from audionet.lib.core.protocol import unpack_response
    from audionet.lib.core.subnet_rules import DEVELOPMENT
    from audionet.lib.miner.app import MinerApp
    from audionet.lib.miner.pool import from_backends
    from audionet.lib.validator.loop import Validator, ValidatorSettings

    chain = OfflineChain(str(tmp_path / "chain.sqlite"), block_seconds=1.0, rules=DEVELOPMENT)  # weights seen at once
    validator_wallet = wallets("validator")
    validator_uid = chain.register(
        validator_wallet.hotkey.ss58_address,
        validator_wallet.coldkeypub.ss58_address,
        stake=1000.0,
        validator_permit=True,
    )
    miners = {}
    for name, factory in (("honest", honest), ("lazy", lazy)):
        wallet = wallets(name)
        uid = chain.register(wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address)
        backend = tone_service.load_backend(f"py:{__name__}:{factory.__name__}")
        miners[name] = (
            uid,
            wallet,
            MinerApp(
                wallet,
                OfflineChain(chain.path, wallet=wallet),
                from_backends({"tone": backend}),
                AccessPolicy(),
                sync_interval=1.0,
            ),
            free_port(),
        )
    with ExitStack() as running:
        for _, wallet, service, port in miners.values():
            running.enter_context(serving(service.app(), port))
            asyncio.run(OfflineChain(chain.path, wallet=wallet).serve("127.0.0.1", port))
        # signed HTTP: the route exists and the answer is signed audio at the asked pitch
        uid, wallet, service, port = miners["honest"]
        body = ToneRequest(text="Hello tone.", seconds=1.0, seed=3).model_dump_json().encode()
        reply = httpx.post(
            f"http://127.0.0.1:{port}/v1/tone",
            content=body,
            headers=sign_request(validator_wallet, "/v1/tone", body, wallet.hotkey.ss58_address),
        )
        assert reply.status_code == 200, reply.text
        meta, flac = unpack_response(reply.content)
        assert meta.service == "tone" and meta.model == "toy:pure-tone"
        assert dominant_hz(tone_service.decode_answer(flac)) == pytest.approx(pitch_of("Hello tone."), abs=2.0)

        # one validator round: both miners asked, the honest one earns more, weights land on chain
        settings = ValidatorSettings(
            state_dir=str(tmp_path / "state"),
            services=("tone",),
            seed=5,
            epoch_length=1,
            round_interval=0.0,
            eligible_after=1,
            ready_error=math.inf,  # one round is enough to earn here
        )
        validator = Validator(
            validator_wallet, OfflineChain(chain.path, wallet=validator_wallet), settings, judge=judge
        )
        asyncio.run(validator.run(rounds=1))
    record = json.loads((tmp_path / "state" / "rounds.jsonl").read_text().splitlines()[0])
    rewards = {r["uid"]: r for r in record["results"]}
    honest_uid, lazy_uid = miners["honest"][0], miners["lazy"][0]
    assert rewards[honest_uid]["gate"] is None and rewards[honest_uid]["components"]["pitch_match"] > 0.99
    assert rewards[honest_uid]["reward"] > rewards[lazy_uid]["reward"]
    weights = chain.weights(validator_uid)
    assert weights[honest_uid] > weights.get(lazy_uid, 0.0) and sum(weights.values()) == pytest.approx(1.0)


def test_the_new_service_is_scored_by_audionet_score(tone_service, judge, tmp_path, capsys):
    from audionet.neurons import score

    text = "Sing this sentence as one long note."
    files = []
    for name, backend in (("right", PureTone()), ("wrong", PureTone(fixed_hz=WRONG_HZ))):
        clip = backend.tone(text, 2.0)
        files.append(str(tmp_path / f"{name}.wav"))
        sf.write(files[-1], clip.samples, clip.sample_rate)
    code = score.main(["--service", "tone", "--text", text, "--seconds", "2", *files, "--json"], judge=judge)
    records = {r["file"]: r for r in json.loads(capsys.readouterr().out)}
    assert code == 0
    right, wrong = records[files[0]], records[files[1]]
    assert set(right["gates"]) == set(TextToTone.judging.gates) and not any(right["gates"].values())
    assert right["score"] > 0.9 and wrong["score"] < 0.2
    assert score.main(["--service", "tone", "--text", text, "--reference", files[0], files[1]]) == 2  # not its input


def test_the_new_service_gets_benchmark_tables(tone_service, tmp_path):
    from audionet.benchmarks.device_tables import main as bench_services
    from tests.files import markdown_tables

    out = tmp_path / "bench"
    assert (
        bench_services.main(
            [
                "--services",
                "tone",
                "--mode",
                "quick",
                "--runs",
                "2",
                "--warmup",
                "1",
                "--parallel",
                "1,2",
                "--sweep-rounds",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (folder,) = out.iterdir()
    summary = json.loads((folder / "benchmark_summary.json").read_text())
    result = summary["services"]["tone"]
    assert result["title"] == "Text To Tone" and result["model"] == "toy:pure-tone"
    assert 4.0 <= result["generation"]["audio_seconds"] <= 6.0  # quick mode: about 5 s of audio per run
    tables = markdown_tables((folder / "tables.md").read_text())
    quality = next(t for t in tables if t and "Pitch (Hz)" in t[0])
    assert quality[0]["Model"] == "toy:pure-tone"
    assert float(quality[0]["Reward (raw, 0-1)"].split("±")[0]) > 0.9
    assert any(row.get("Service") == "Text To Tone" for t in tables for row in t)
