"""The self-check's findings: registration and the endpoint from a metagraph, one verdict line per service
with each gate in words and how often it fired, what the curve pays against the reference, the parts and
penalties in words, time against the timeout (a refusal named as one, with its whole reason); READY only when a
service would earn; and every gate the adversary catalogue triggers in the Judge is named on the line (the
catalogue's answers judged as one round)."""

from types import SimpleNamespace

import numpy as np
import pytest

from audionet.lib.scoring.judge import GATES
from audionet.lib.services import registry
from audionet.lib.validator.check import chain_findings, health_finding
from audionet.lib.validator.check_verdict import GATE_WORDS, Finding, Reference, ready, service_findings
from audionet.lib.validator.client import Answer, Target
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.round import Scored
from tests.lib.validator.test_verdicts import scored


def metagraph(axon):
    return SimpleNamespace(neurons=[SimpleNamespace(uid=4, hotkey="5Miner", axon=axon)])


def test_registration_and_the_endpoint_against_the_flags():
    found, target = chain_findings(metagraph("1.2.3.4:8091"), "5Miner", "1.2.3.4:8091")
    assert [str(f) for f in found] == [
        "ok   registration: uid 4, hotkey 5Miner",
        "ok   endpoint: 1.2.3.4:8091 on chain, where the flags say the miner listens",
    ]
    assert target == Target(4, "5Miner", "1.2.3.4:8091") and all(f.level == "ok" for f in found)
    found, target = chain_findings(metagraph("1.2.3.4:9"), "5Miner", "1.2.3.4:8091")
    assert str(found[1]) == "FAIL endpoint: 1.2.3.4:9 on chain, but the flags say 1.2.3.4:8091"
    assert target.endpoint == "1.2.3.4:9" and not ready(found)  # reached where validators reach it
    found, _ = chain_findings(metagraph(None), "5Miner", "1.2.3.4:8091")
    assert found[1].level == "FAIL" and "none on chain" in found[1].line
    found, target = chain_findings(metagraph("1.2.3.4:8091"), "5Other", "1.2.3.4:8091")
    assert target is None and str(found[0]) == "FAIL registration: hotkey 5Other is not registered on this subnet"


def test_a_health_slower_than_a_validator_waits_is_a_warning_and_one_serving_nothing_scored_fails():
    assert str(health_finding(["tts", "vc"], 0.2)) == "ok   health: signed by the miner; it serves tts, vc"
    slow = health_finding(["tts"], 7.5)
    assert slow.level == "warn" and "in 7.5 s: a validator waits 5 s, then asks for every service" in slow.line
    # the miner still earns: validators ask it for every service
    assert ready([slow, Finding("ok", "tts", "earns", service="tts")])
    nothing = health_finding([], 0.2)
    assert str(nothing) == "FAIL health: signed by the miner; it serves nothing the validators score"


def test_the_verdict_counts_each_gate_in_words_and_times_answers_against_the_timeout():
    replay = "replays the reference clip"
    answers = [scored(1, "vc", 0.0, "replay", replay) for _ in range(7)]
    answers += [scored(1, "vc", 0.0, "no_speech", "no speech: VAD finds speech in 3% of the clip")]
    answers += [scored(1, "vc", 0.6), scored(1, "vc", 0.7)]
    verdict, timing = vc_findings(answers, 30.0, REFERENCE)
    assert str(verdict) == (
        "FAIL vc: 8 of 10 answers gated, it earns nothing: replays the reference clip x7 (replays the reference"
        " clip); no speech found x1 (no speech: VAD finds speech in 3% of the clip)"
    )
    assert str(timing) == "ok   vc time: 0.12 s an answer, slowest 0.12 s, of a 30 s timeout"
    verdict, timing = vc_findings(answers[-2:], 0.2, REFERENCE)
    assert str(verdict) == (
        "ok   vc: 2 of 2 answers scored, score 0.65 (lowest 0.60), 100% of the reference's 0.65 (kokoro-clone:, same"
        " prompts): the curve pays it 100% of the reference's pay"
    )
    assert timing.level == "warn"  # 0.12 s of a 0.2 s timeout: a busy hour may cross it
    verdict, timing = vc_findings([failed("timed out after 30 s")], 30, REFERENCE)
    assert "no answer within the timeout x1 (timed out after 30 s)" in verdict.line
    assert str(timing) == "FAIL vc time: no answer within the 30 s timeout"


REFERENCE = Reference("kokoro-clone:", 0.65)


def vc_findings(scored, timeout_s, reference):
    found = service_findings("vc", scored, timeout_s, registry.get("vc").judging, reference)
    return found[0], found[-1]


def failed(error: str) -> Scored:
    answer = Answer(Target(1, "5Hot1", ""), "vc", None, 0.01, error=error)  # type: ignore[arg-type]
    return Scored(answer, 0.0, f"no valid answer: {error}", 0.0, {}, "no_answer")


def test_a_refusal_is_named_with_its_status_and_its_whole_reason():
    reason = 'HTTP 400: "' + "a reason of many words " * 8 + 'that ends here"'
    verdict, timing = vc_findings([failed(reason)] * 3, 30, REFERENCE)
    assert verdict.level == "FAIL" and f"refused with HTTP 400 x3 ({reason})" in verdict.line
    assert str(timing) == "FAIL vc time: no answer: refused with HTTP 400 x3"  # not "within the timeout"


def test_the_verdict_is_what_the_curve_pays_against_the_reference():
    def level(score, reference=REFERENCE):
        return vc_findings([scored(1, "vc", score)], 30, reference)[0]

    assert level(0.65 * CURVE.floor).level == "FAIL" and "earns nothing" in level(0.65 * CURVE.floor).line
    little = 0.65 * (CURVE.floor + 0.25 * (1 - CURVE.floor))  # a quarter of the way from the floor up
    assert level(little).level == "warn" and "earns little" in level(little).line
    assert level(0.6).level == "ok"
    weak = level(0.01, Reference("kokoro-clone:", 0.01))
    assert weak.level == "ok" and "a weak measure: the reference itself scores under 0.05" in weak.line
    unknown = level(0.6, Reference("kokoro-clone:", None, "no such backend"))
    assert (
        unknown.level == "warn" and "no reference to measure against (kokoro-clone:: no such backend)" in unknown.line
    )


def test_parts_and_penalties_are_said_in_the_declarations_words():
    components = {"similarity": 0.5, "naturalness": 0.4, "content_penalty": 1.0, "other_voice_penalty": 0.0}
    found = service_findings(
        "vc", [scored(1, "vc", 0.0, components=components)], 30, registry.get("vc").judging, REFERENCE
    )
    why = [f for f in found if f.what == "vc why"][0]
    assert "similarity 0.50" in why.line and "naturalness 0.40" in why.line
    assert "penalties: content took 100%" in why.line and "other voice" not in why.line


def test_ready_needs_one_service_that_earns_and_nothing_wrong_with_the_miner():
    fine = Finding("ok", "registration", "uid 1")
    earns, fails = Finding("ok", "tts", "", "tts"), Finding("FAIL", "music", "", "music")
    assert ready([fine, earns, fails]) and not ready([fine, fails]) and not ready([fine])
    assert not ready([Finding("FAIL", "endpoint", "elsewhere"), earns])


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
            line = str(service_findings(name, [verdict], service.timeout_s, service.judging, Reference("", 1.0))[0])
            if verdict.gate:
                fired.add(verdict.gate_name)
                assert line.startswith(
                    f"FAIL {name}: 1 of 1 answers gated, it earns nothing: {GATE_WORDS[verdict.gate_name]} x1"
                ), line
    assert {"no_speech", "duplicate", "replay"} <= fired, fired  # what the committed adversary table shows
