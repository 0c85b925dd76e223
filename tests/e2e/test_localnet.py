"""A whole subnet: each mechanism on the chain gets its service's weights, a garbage miner earns nothing, a
specialist is asked for its service only, a killed validator resumes from exactly the records it saved, and
`audionet-localnet` runs its roster of best, cheap and cheating miners."""

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from audionet.lib.core.audio import decode_flac
from audionet.lib.core.subnet_rules import DEVELOPMENT
from audionet.lib.localnet import ROSTER, LocalNet
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.state import ScoreState
from tests.chromium import CHROMIUM, rendered_dom
from tests.e2e.garbage import GARBAGE_MODELS
from tests.files import REPO
from tests.gated import wait_until
from tests.replay import not_replayed

pytestmark = pytest.mark.timeout(900)
SERVICES = ("tts", "vc", "music")


def wait_for_rounds(net, count, process, timeout=300):
    deadline = time.monotonic() + timeout
    state_path = os.path.join(net.state_dir, "state.json")
    while len(net.round_records()) < count or ScoreState.load(state_path, SERVICES).round < count:
        assert process.poll() is None, (
            f"validator died:\n{open(os.path.join(net.logs_dir, 'validator.log')).read()[-3000:]}"
        )
        assert time.monotonic() < deadline, "validator too slow"
        time.sleep(0.3)


def check_restored(net, round_record, state_before: ScoreState):
    """Every record the round touched is the restored one brought up to the round's time plus its answers,
    exactly."""
    assert round_record["round"] == state_before.round + 1
    after = ScoreState.load(os.path.join(net.state_dir, "state.json"), SERVICES)
    assert not_replayed(state_before, after, round_record) == []


def test_each_mechanism_gets_its_service_garbage_earns_none_a_specialist_and_state_survive_a_kill(tmp_path):
    # A mechanism per service: root allows three and the owner lowers max_uids to 85 (LocalNet does)
    net = LocalNet(str(tmp_path), mechanisms=3, rules=replace(DEVELOPMENT, max_mechanisms=3))
    net.add_validator()
    honest = [net.add_miner(f"honest{i}") for i in range(3)]
    garbage = net.add_miner("garbage", models=GARBAGE_MODELS)
    specialist = net.add_miner("specialist", extra_args=("--services", "tts"))
    args = ["--neuron.eligible_after", "1", "--neuron.seed", "11"]
    try:
        net.wait_ready()
        assert net.run_validator(1, extra_args=args) == 0
        report = net.report()
        state = ScoreState.load(os.path.join(net.state_dir, "state.json"), SERVICES, replace(CURVE, eligible_after=1))
        expected = state.weights()
        for mechid, service in enumerate(SERVICES):  # one mechanism per service
            on_chain = net.chain.weights(net.validator_uid, mechid)
            assert on_chain.get(garbage.uid, 0.0) == 0.0 and sum(on_chain.values()) == pytest.approx(1.0)
            for uid, weight in enumerate(expected[service]):
                assert on_chain.get(uid, 0.0) == pytest.approx(weight, abs=1e-4), (service, on_chain, expected)
        emission = {m["uid"]: m["emission"] for m in report["miners"]}
        assert emission[garbage.uid] == 0.0 and sum(emission.values()) == pytest.approx(1.0)
        # One answer each: whether the specialist out-scores the honest miners is the judge's noise, so the test
        # asks that it is paid exactly what its TTS weight says and nothing from the services it does not serve
        assert state.served(specialist.uid) == {"tts"}
        assert expected["vc"][specialist.uid] == expected["music"][specialist.uid] == 0.0
        assert (emission[specialist.uid] > 0) == (expected["tts"][specialist.uid] > 0)
        gates = {(r["uid"], r["service"]): r["gate"] for r in net.round_records()[0]["results"]}
        assert "clipped" in gates[(garbage.uid, "tts")]
        assert "HTTP 500" in gates[(garbage.uid, "vc")]
        assert "wrong length" in gates[(garbage.uid, "music")]
        assert all(gates[(m.uid, s)] is None for m in honest for s in ("tts", "vc", "music")), gates
        assert {s for u, s in gates if u == specialist.uid} == {"tts"}  # never asked for what it does not serve

        # Kill the validator between rounds 2 and 3, then restart it.
        saved = ScoreState.load(os.path.join(net.state_dir, "state.json"), SERVICES)
        process = net.start_validator(0, extra_args=args + ["--neuron.round_interval", "600"])
        wait_for_rounds(net, 2, process)
        summary = os.path.join(net.state_dir, "summary.json")
        # The summary is the round's last write: after it the validator waits 600 s for the next round.
        wait_until(lambda: json.load(open(summary))["round"] == 2, what="round 2's summary")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        check_restored(net, net.round_records()[1], saved)
        killed = ScoreState.load(os.path.join(net.state_dir, "state.json"), SERVICES)
        assert killed.round == 2
        assert net.run_validator(1, extra_args=args) == 0
        check_restored(net, net.round_records()[2], killed)
    finally:
        net.stop()


def test_localnet_runs_its_roster_pays_no_cheat_and_logs_each_round(tmp_path):
    out = tmp_path / "out.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "audionet.neurons.localnet",
            "--miners",
            "3",
            "--rounds",
            "1",
            "--json",
            str(out),
            "--workdir",
            str(tmp_path / "net"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["rounds"] == 1 and [m["backend"] for m in report["miners"]] == [label for label, _ in ROSTER]
    best, cheap, cheat = report["miners"]
    assert best["models"] == {"tts": "kokoro:", "vc": "kokoro-clone:", "music": "baseline:synth"}
    assert cheat["models"]["tts"] == "loop:baseline:espeak" and cheat["emission"] == 0.0
    assert best["emission"] + cheap["emission"] == pytest.approx(1.0)
    assert report["mechanisms"]["count"] == 1 and report["mechanisms"]["shares"] == pytest.approx([1.0])
    assert "1 mechanism(s) for 3 services at max_uids 256 (a default subnet" in report["subnet"]
    for miner in report["miners"]:
        assert set(miner["scores"]) == set(miner["weights"]) == {"tts", "vc", "music"}
        assert miner["mean_latency_s"] > 0 and miner["hotkey"][:12] in result.stdout
    assert "share of emission" in result.stdout and "cheat: 1 s loop" in result.stdout
    assert "round 1/1: miner0: tts" in result.stdout  # not a terminal: one line per round, no progress bar
    clip = tmp_path / "net" / "audio" / "round-00001" / f"uid-{best['uid']:03d}-music.flac"
    audio = decode_flac(clip.read_bytes(), max_seconds=30, max_bytes=10**7)
    assert audio.sample_rate == 32_000 and audio.seconds >= 3.5
    # localnet.html beside the JSON: in Chromium every clip plays, every service's weight plot and curve is drawn
    page = out.with_suffix(".html")
    if CHROMIUM:
        dom = rendered_dom(page)
        # three weight plots and three curves (issue 43: a point per miner on each service's curve)
        assert dom.count('data-state="playable"') == 9 and dom.count('data-drawn="yes"') == 6, dom[-2000:]
        assert 'data-drawn="no"' not in dom and dom.count('data-points="3"') == 3, dom[-2000:]
        assert "parts " in dom  # a clip past the gates says its parts and penalties, as its verdict row does
    else:
        assert page.read_text().count("data:audio/flac;base64,") == 9
    # the miners were stopped with SIGTERM at the end and still wrote their timings
    for index in range(3):
        with open(tmp_path / "net" / "telemetry" / f"miner{index}" / "timing.jsonl") as handle:
            last = json.loads(handle.readlines()[-1])
        assert all(last["scalars"][f"timing/{s}/generation/count"] == 1 for s in ("tts", "vc", "music")), last


def test_sigterm_stops_every_process_localnet_started(tmp_path):
    import asyncio

    import httpx

    from audionet.lib.core.chain import OfflineChain

    workdir = tmp_path / "net"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "audionet.neurons.localnet",
            "--miners",
            "2",
            "--rounds",
            "50",
            "--workdir",
            str(workdir),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    rounds = workdir / "validator" / "rounds.jsonl"
    deadline = time.monotonic() + 120
    while not (rounds.exists() and rounds.read_text().strip()):
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.3)
    endpoints = [n.axon for n in asyncio.run(OfflineChain(str(workdir / "chain.sqlite")).metagraph()).neurons if n.axon]
    assert len(endpoints) == 2 and httpx.get(f"http://{endpoints[0]}/v1/health").status_code == 200
    process.terminate()
    assert process.wait(60) == 130
    for endpoint in endpoints:
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://{endpoint}/v1/health", timeout=2)
    assert processes_naming(str(workdir)) == []  # the validator and the miners stopped too


def processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention `text` (Linux /proc; a reaped process has none)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                line = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in line:
            found.append(line)
    return found
