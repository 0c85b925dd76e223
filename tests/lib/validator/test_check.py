"""The self-check's findings: registration and the endpoint from a metagraph, one verdict line per service
with each gate in words and how often it fired, time against the timeout; and every gate the adversary
catalogue triggers in the Judge is named on the line (the catalogue's answers judged as one round)."""

from types import SimpleNamespace

import numpy as np
import pytest

from audionet.lib.scoring.judge import GATES
from audionet.lib.validator.check import GATE_WORDS, chain_findings, ready, service_findings
from audionet.lib.validator.client import Answer, Target
from tests.lib.validator.test_verdicts import scored


def metagraph(axon):
    return SimpleNamespace(neurons=[SimpleNamespace(uid=4, hotkey="5Miner", axon=axon)])


def test_registration_and_the_endpoint_against_the_flags():
    found, target = chain_findings(metagraph("1.2.3.4:8091"), "5Miner", "1.2.3.4:8091")
    assert [str(f) for f in found] == [
        "ok   registration: uid 4, hotkey 5Miner",
        "ok   endpoint: 1.2.3.4:8091 on chain, where the flags say the miner listens",
    ]
    assert target == Target(4, "5Miner", "1.2.3.4:8091") and ready(found)
    found, target = chain_findings(metagraph("1.2.3.4:9"), "5Miner", "1.2.3.4:8091")
    assert str(found[1]) == "FAIL endpoint: 1.2.3.4:9 on chain, but the flags say 1.2.3.4:8091"
    assert target.endpoint == "1.2.3.4:9" and not ready(found)  # reached where validators reach it
    found, _ = chain_findings(metagraph(None), "5Miner", "1.2.3.4:8091")
    assert found[1].level == "FAIL" and "none on chain" in found[1].line
    found, target = chain_findings(metagraph("1.2.3.4:8091"), "5Other", "1.2.3.4:8091")
    assert target is None and str(found[0]) == "FAIL registration: hotkey 5Other is not registered on this subnet"


def test_the_verdict_counts_each_gate_in_words_and_times_answers_against_the_timeout():
    replay = "replays the reference clip"
    answers = [scored(1, "vc", 0.0, "replay", replay) for _ in range(7)]
    answers += [scored(1, "vc", 0.0, "no_speech", "no speech: VAD finds speech in 3% of the clip")]
    answers += [scored(1, "vc", 0.6), scored(1, "vc", 0.7)]
    verdict, timing = service_findings("vc", answers, timeout_s=30.0)
    assert str(verdict) == (
        "FAIL vc: 8 of 10 answers gated: replays the reference clip x7 (replays the reference clip); "
        "no speech found x1 (no speech: VAD finds speech in 3% of the clip)"
    )
    assert str(timing) == "ok   vc time: 0.12 s an answer, slowest 0.12 s, of a 30 s timeout"
    verdict, timing = service_findings("vc", answers[-2:], timeout_s=0.2)
    assert str(verdict) == "ok   vc: 2 of 2 answers scored, score 0.65 (lowest 0.60)"
    assert timing.level == "warn"  # 0.12 s of a 0.2 s timeout: a busy hour may cross it
    failed = Answer(Target(1, "5Hot1", ""), "vc", None, 30.0, error="timed out after 30 s")  # type: ignore[arg-type]
    from audionet.lib.validator.round import Scored

    verdict, timing = service_findings(
        "vc", [Scored(failed, 0.0, "no valid answer: timed out", 0.0, {}, "no_answer")], 30
    )
    assert "no valid answer x1" in verdict.line and timing.level == "FAIL"


def test_every_gate_has_words():
    assert set(GATES) | {"no_answer"} == set(GATE_WORDS)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_gate_the_catalogue_triggers_is_named():
    from audionet.benchmarks.adversaries.attacks import for_service
    from audionet.benchmarks.adversaries.main import make_kit
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.services import registry
    from audionet.lib.validator.round import score_round

    judge, kit, fired = Judge.load(devices="cpu"), make_kit(3), set()
    for name in registry.names():
        service = registry.get(name)
        honest = service.load_backend(service.default_backend)
        rng = np.random.default_rng(3)
        sources = service.open_sources(None)
        earlier = service.draw(rng, sources)
        previous = service.generate(honest, earlier)
        judge.score(service.judging, [service.job(earlier, previous)])  # an honest answer a copier takes
        for attack in for_service(name):
            request = service.draw(rng, sources)
            audio = attack.make(kit, request, service.generate(honest, request), previous)
            answer = Answer(Target(1, "5Cheat", ""), name, request, 1.0, audio)
            (verdict,) = score_round([answer], judge, {name: service})
            line = str(service_findings(name, [verdict], service.timeout_s)[0])
            if verdict.gate:
                fired.add(verdict.gate_name)
                assert line.startswith(f"FAIL {name}: 1 of 1 answers gated: {GATE_WORDS[verdict.gate_name]} x1"), line
    assert {"no_speech", "duplicate", "replay"} <= fired, fired  # what the committed adversary table shows
