"""The service registry and the rule that makes a service one unit: outside lib/services no
code branches on a service's name."""

import argparse
import ast
import pathlib

import numpy as np
import pytest

from audionet.lib import services
from audionet.lib.core.errors import WireError
from audionet.lib.services import MUSIC, TTS, VC, Prompt

PACKAGE_FOLDERS = ("lib", "models", "neurons", "benchmarks", "scripts")
REPO = pathlib.Path(__file__).resolve().parents[3]


def test_builtin_services_are_registered_in_order_and_complete():
    assert services.names()[:3] == ("tts", "vc", "music")
    from audionet.lib.scoring.judge import check

    for service in services.all_services():
        assert service.judging.service == service.name and service.judging.parts
        check(service.judging)  # every gate and analysis it names exists
        assert service.request_model.model_fields["service"].default == service.name
        assert service.answer_limit_s > service.max_seconds


def test_service_list_flag_is_checked_against_the_registry():
    assert services.service_list("vc, tts,vc") == ("vc", "tts")  # order kept, repeats dropped
    for bad in ("tts,karaoke", "", " , "):
        with pytest.raises(argparse.ArgumentTypeError):
            services.service_list(bad)


def test_a_name_is_registered_once_and_unknown_names_are_404():
    with pytest.raises(ValueError, match="already registered"):
        services.register(type(TTS)())
    with pytest.raises(KeyError, match="known: tts, vc, music"):
        services.get("karaoke")
    with pytest.raises(WireError) as error:
        services.parse_request("../admin", b"{}")
    assert error.value.status == 404


def test_one_request_factory_validates_every_prompt():
    rng = np.random.default_rng(0)
    assert TTS.request(Prompt("Hello there.", seed=4)).seed == 4
    assert MUSIC.request(Prompt("calm piano", seconds=5.0)).seconds == 5.0
    for service, prompt, fragment in (
        (TTS, Prompt("   "), "'text'"),
        (MUSIC, Prompt("calm piano"), "needs a length"),
        (MUSIC, Prompt("calm piano", seconds=45.0), "'seconds'"),
        (VC, Prompt("Say this."), "needs a reference"),
    ):
        with pytest.raises(WireError, match=fragment):
            service.request(prompt)
    drawn = MUSIC.draw(rng, None)
    assert 4.0 <= drawn.seconds <= 10.0 and drawn.prompt


def test_declared_scores_reweight_missing_parts_and_penalise_speech_like_music():
    def score(service, **measures):
        return service.judging.breakdown(measures).score

    # DNSMOS 2.5 is naturalness 0.5 over its 1-4 range; WER 0 is full intelligibility; naturalness also gates 0.3.
    assert score(TTS, mos_dnsmos=2.5, wer=0.0) == pytest.approx((0.4 * 0.5 + 0.6 * 1.0) * (1 - 0.3 * 0.5))
    assert score(TTS, wer=0.1) == pytest.approx(0.9)  # no MOS model: not a 0 for everyone
    assert score(TTS, mos_dnsmos=4.0, wer=1.0) == 0.0  # says none of the words: the content penalty takes all
    music = {"quality": 0.8, "duration_error": 0.0}
    assert score(MUSIC, **music) == pytest.approx(0.8)
    assert score(MUSIC, **music, speech_likeness=0.9) == 0.0
    assert score(MUSIC, **{**music, "duration_error": 1.0}) == pytest.approx(0.8 * 0.8)  # at the gate's edge


def service_name_branches(path: pathlib.Path) -> list[str]:
    """`x == "tts"`, `x in ("vc", ...)`, `d["music"]`, `match x: case "tts"`: code that treats one
    service differently from the others."""
    names = set(services.names())
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            constants = [c for c in (node.left, *node.comparators) for c in ast.walk(c)]
        elif isinstance(node, ast.Subscript):
            constants = [node.slice]
        elif isinstance(node, ast.MatchValue):
            constants = [node.value]
        else:
            continue
        if any(isinstance(c, ast.Constant) and c.value in names for c in constants):
            found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_code_outside_the_service_modules_branches_on_a_service_name():
    files = [
        p
        for folder in PACKAGE_FOLDERS
        for p in (REPO / folder).rglob("*.py")
        if "services" not in p.relative_to(REPO).parts
    ]
    assert len(files) > 50
    branches = [hit for path in files for hit in service_name_branches(path)]
    assert branches == []
    # the scanner does find a branch when one is there
    probe = REPO / "tests" / "lib" / "services" / "test_registry.py"
    assert service_name_branches(probe)  # this file compares to "tts" below on purpose
    assert "tts" == TTS.name
