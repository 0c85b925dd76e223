"""`audionet-miner check` against miners on loopback (offline chain): would this miner earn?

An honest miner (the best offline TTS, Kokoro) is ready, exit 0, its service `ok` against the reference judged in
the same run. A 1 s loop cheat (`loop:baseline:*`) and noise sold as music pass every gate but earn nothing under
the curve: FAIL, exit 1, with the penalty that took their score named. A miner that refuses with 400 is reported
as refused, with the status and the whole reason; silence is gated; a miner too slow for the timeout fails. A cheat the gates catch (full-scale noise for speech) fails
with the gate named and counted; a miner whose flags say another port than the chain has fails on the endpoint
but is still reached where it is."""

import pytest

from audionet.lib.localnet import LocalNet
from audionet.neurons.miner import main as miner_main
from tests.e2e.garbage import REFUSAL

pytestmark = pytest.mark.timeout(900)
CHECK = ["--check.answers", "2", "--check.seed", "5"]
SLOW_HOST_S = "120"


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    net = LocalNet(str(tmp_path_factory.mktemp("check")))
    miners = {
        # every miner here shares 2 cores: the honest one, and its check, allow the time this machine needs
        "good": ("--services", "tts", "--tts.model", "kokoro:", "--miner.timeout.tts", SLOW_HOST_S),
        "cheat": ("--services", "tts", "--tts.model", "py:tests.e2e.garbage:tts"),
        "loop": (
            "--services",
            "tts,music",
            "--tts.model",
            "loop:baseline:espeak",
            "--music.model",
            "loop:baseline:synth",
        ),
        "noise": ("--services", "music", "--music.model", "py:tests.e2e.garbage:noise_music"),
        "refuses": ("--services", "music", "--music.model", "py:tests.e2e.garbage:refusing_music"),
        "silent": ("--services", "music", "--music.model", "py:tests.e2e.garbage:silent_music"),
    }
    started = {name: net.add_miner(name, extra_args=flags) for name, flags in miners.items()}
    try:
        net.wait_ready()
        yield net, started
    finally:
        net.stop()


def check(miner, capsys, *extra) -> tuple[int, list[str]]:
    code = miner_main(["check", *miner.args, *CHECK, *extra])
    return code, capsys.readouterr().out.splitlines()


def not_ready(net, name: str, capsys, *extra) -> list[str]:
    """The check's lines for miner `name`, which must exit 1 and end NOT READY."""
    code, lines = check(net[1][name], capsys, *extra)
    assert code == 1 and lines[-1].startswith("NOT READY"), "\n".join(lines)
    return lines


def line(lines: list[str], start: str) -> str:
    (found,) = [text for text in lines if text.startswith(start)]
    return found


def test_an_honest_miner_would_earn_and_is_ready(net, capsys):
    _, miners = net
    good = miners["good"]
    code, lines = check(good, capsys, "--check.timeout.tts", SLOW_HOST_S)
    assert code == 0, "\n".join(lines)
    assert lines[0] == f"ok   registration: uid {good.uid}, hotkey {good.hotkey}"
    assert lines[1].startswith(f"ok   endpoint: 127.0.0.1:{good.port} on chain")
    assert lines[2] == "ok   health: signed by the miner; it serves tts"
    verdict = line(lines, "ok   tts: 2 of 2 answers scored, score 0.")
    assert "of the reference's" in verdict and "(kokoro:, same prompts)" in verdict, verdict
    assert line(lines, "ok   tts why: parts naturalness ")
    assert line(lines, "ok   tts time: ").endswith("of a 120 s timeout")
    assert lines[-1] == "READY: a validator would pay for tts"


def test_a_loop_cheat_earns_nothing_and_is_not_ready(net, capsys):
    lines = not_ready(net, "loop", capsys)
    music = line(lines, "FAIL music: ")
    assert "at or under the curve's floor of 78%: it earns nothing" in music or "gated" in music, music
    assert "loop took" in line(lines, "FAIL music why: "), lines
    assert line(lines, "FAIL tts: ")
    assert lines[-1] == "NOT READY: no service would earn; see the FAIL lines"


def test_noise_sold_as_music_earns_nothing_and_is_not_ready(net, capsys):
    lines = not_ready(net, "noise", capsys)
    assert "it earns nothing" in line(lines, "FAIL music: "), lines
    assert "penalties: not music took" in line(lines, "FAIL music why: "), lines


def test_a_refusal_is_reported_with_its_status_and_whole_reason(net, capsys):
    lines = not_ready(net, "refuses", capsys)
    verdict = line(lines, "FAIL music: ")
    assert f'refused with HTTP 400 x2 (HTTP 400: "{REFUSAL}")' in verdict, verdict
    assert line(lines, "FAIL music time: ") == "FAIL music time: no answer: refused with HTTP 400 x2"


def test_silence_is_gated_and_not_ready(net, capsys):
    lines = not_ready(net, "silent", capsys)
    verdict = line(lines, "FAIL music: ")
    assert verdict.startswith("FAIL music: 2 of 2 answers gated, it earns nothing: mostly silent x2 (silent: "), verdict


def test_a_miner_too_slow_for_the_timeout_is_not_ready(net, capsys):
    # Kokoro cannot speak a validator's sentence in 0.3 s on any CPU: too slow for that timeout.
    lines = not_ready(net, "good", capsys, "--check.timeout.tts", "0.3")
    assert line(lines, "FAIL tts: ")
    assert line(lines, "FAIL tts time: ").startswith("FAIL tts time: no answer"), lines


def test_a_cheat_is_not_ready_and_the_gate_is_named_with_its_count(net, capsys):
    lines = not_ready(net, "cheat", capsys)
    verdict = line(lines, "FAIL tts:")
    assert verdict.startswith("FAIL tts: 2 of 2 answers gated, it earns nothing: clipped x2 (clipped: ")


def test_flags_that_disagree_with_the_chain_fail_on_the_endpoint(net, capsys):
    _, miners = net
    good = miners["good"]
    code, lines = check(good, capsys, "--axon.external_port", "9", "--check.answers", "1")
    assert code == 1
    assert lines[1] == f"FAIL endpoint: 127.0.0.1:{good.port} on chain, but the flags say 127.0.0.1:9"
    assert lines[2].startswith("ok   health")  # reached where the chain says it is
