"""`audionet-miner check` against miners on loopback (offline chain): an honest one is ready, exit 0; a cheat
(full-scale noise for speech) is not, exit 1, and the line names the gate and how often it fired; a miner
whose flags say another port than the chain has fails on the endpoint but is still reached where it is."""

import pytest

from audionet.lib.localnet import LocalNet
from audionet.neurons.miner import main as miner_main

pytestmark = pytest.mark.timeout(420)
CHECK = ["--check.answers", "3", "--check.seed", "5"]


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    net = LocalNet(str(tmp_path_factory.mktemp("check")))
    good = net.add_miner("good", extra_args=("--services", "tts", "--tts.model", "baseline:espeak"))
    cheat = net.add_miner("cheat", extra_args=("--services", "tts", "--tts.model", "py:tests.e2e.garbage:tts"))
    try:
        net.wait_ready()
        yield net, good, cheat
    finally:
        net.stop()


def check(miner, capsys, *extra) -> tuple[int, list[str]]:
    code = miner_main(["check", *miner.args, *CHECK, *extra])
    return code, capsys.readouterr().out.splitlines()


def test_an_honest_miner_is_ready(net, capsys):
    _, good, _ = net
    code, lines = check(good, capsys)
    assert code == 0, lines
    assert lines[0] == f"ok   registration: uid {good.uid}, hotkey {good.hotkey}"
    assert lines[1].startswith(f"ok   endpoint: 127.0.0.1:{good.port} on chain")
    assert lines[2] == "ok   health: signed by the miner; it serves tts"
    assert lines[3].startswith("ok   tts: 3 of 3 answers scored, score 0.")
    assert lines[4].startswith("ok   tts time: ") and lines[4].endswith("of a 20 s timeout")
    assert lines[-1].startswith("READY")


def test_a_cheat_is_not_ready_and_the_gate_is_named_with_its_count(net, capsys):
    _, _, cheat = net
    code, lines = check(cheat, capsys)
    assert code == 1, lines
    (verdict,) = [line for line in lines if line.startswith("FAIL tts:")]
    assert verdict.startswith("FAIL tts: 3 of 3 answers gated: clipped x3 (clipped: ")
    assert lines[-1].startswith("NOT READY")


def test_flags_that_disagree_with_the_chain_fail_on_the_endpoint(net, capsys):
    _, good, _ = net
    code, lines = check(good, capsys, "--axon.external_port", "9", "--check.answers", "1")
    assert code == 1
    assert lines[1] == f"FAIL endpoint: 127.0.0.1:{good.port} on chain, but the flags say 127.0.0.1:9"
    assert lines[2].startswith("ok   health")  # reached where the chain says it is
