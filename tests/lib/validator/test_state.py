import json
import math
import os
from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.validator.coverage import Coverage
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.state import LEGACY_ANSWERS, V1_ROUNDS, ScoreState

SERVICES = ("tts", "vc", "music")
EAGER = replace(CURVE, eligible_after=1)  # eligible from one answer


def test_answers_make_the_estimate_and_nan_never_reaches_weights():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b", "c"])
    state.advance(1000.0)
    assert state.update("tts", 0, 1.0) == 1.0
    assert state.update("tts", 0, 0.5) == pytest.approx(0.75)
    assert state.answers()["tts"] == [2, 0, 0]
    for service, reward in (("tts", float("nan")), ("vc", float("inf")), ("music", -3.0)):
        state.update(service, 1, reward)
        state.update(service, 2, reward)
    weights = state.weights()
    assert all(math.isfinite(w) and w >= 0 for column in weights.values() for w in column)
    assert weights["tts"] == [1.0, 0.0, 0.0]  # NaN, inf and negative rewards all count as 0
    assert weights["vc"] == [0.0, 0.0, 0.0]  # nobody earned anything in vc


def test_each_service_is_paid_on_its_own():
    """A uid that answers one service well and another badly is paid in the first, whatever the second."""
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    for _ in range(3):
        state.update("tts", 0, 0.9)
        state.update("tts", 1, 0.3)
        state.update("vc", 0, 0.2)
        state.update("vc", 1, 0.8)
    weights = state.weights()
    assert weights["tts"] == [1.0, 0.0] and weights["vc"] == [0.0, 1.0] and weights["music"] == [0.0, 0.0]


def test_a_uid_paid_only_where_it_serves():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    for uid in (0, 1):
        state.update("tts", uid, 0.8)
    state.set_served(1, {"music"})
    assert state.weights()["tts"] == [1.0, 0.0] and state.served(1) == {"music"}
    assert state.sync(["a", "z"]) == [1] and state.served(1) == set(SERVICES)  # a new hotkey: asked for everything


def test_changed_hotkey_resets_only_that_uid():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    state.update("vc", 0, 1.0)
    state.update("vc", 1, 1.0)
    assert state.sync(["a", "z", "new"]) == [1]
    assert state.answers()["vc"] == [1, 0, 0] and state.estimates()["vc"] == [1.0, 0.0, 0.0]


def test_no_weight_before_eligible():
    state = ScoreState(("tts",), curve=replace(CURVE, eligible_after=3))
    state.sync(["a"])
    for _ in range(2):
        state.update("tts", 0, 0.9)
        assert state.weights()["tts"] == [0.0]
    state.update("tts", 0, 0.9)
    assert state.weights()["tts"] == [1.0]


def test_save_and_load_restore_exact_floats_atomically_and_time_passes_while_down(tmp_path):
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES, round=7, last_weights_block=42, curve=EAGER)
    state.sync(["a", "b"])
    state.advance(5000.0)
    state.update("music", 1, 0.1234567890123)
    state.update("music", 1, 0.7)
    state.save(path)
    restored = ScoreState.load(path, SERVICES, EAGER)
    assert restored == state and restored.curve == EAGER and restored.time == 5000.0
    assert os.listdir(tmp_path) == ["state.json"]  # no temp file left behind
    saved = json.load(open(path))
    assert saved["version"] == 6 and saved["records"]["music"]["count"] == [0.0, 2.0]
    restored.advance(5000.0 + CURVE.memory.record_s)
    assert restored.records["music"].weight[1] == pytest.approx(2 / math.e)
    assert restored.estimates()["music"][1] == pytest.approx(state.estimates()["music"][1])


def test_a_restart_keeps_paying_the_same_uids(tmp_path):
    """Down for ten minutes: the weights after the restart are those before, within 1 %."""
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync([f"hk{u}" for u in range(20)])
    state.advance(1000.0)
    for uid in range(20):
        for _ in range(10):
            state.update("tts", uid, 0.5 + 0.025 * uid)
    before = state.weights()["tts"]
    state.save(path)
    later = ScoreState.load(path, SERVICES, EAGER)
    later.advance(1000.0 + 600.0)
    after = later.weights()["tts"]
    assert sum(abs(a - b) for a, b in zip(after, before)) / 2 < 0.01
    assert [w > 0 for w in after] == [w > 0 for w in before]


def test_adding_a_service_leaves_the_others_weights_alone(tmp_path):
    path = str(tmp_path / "state.json")
    state = ScoreState(("tts", "vc"), curve=EAGER)
    state.sync(["a", "b"])
    for uid, reward in ((0, 0.9), (1, 0.85)):
        for _ in range(4):
            state.update("tts", uid, reward)
            state.update("vc", uid, reward)
    state.save(path)
    grown = ScoreState.load(path, SERVICES, EAGER)
    assert grown.weights()["tts"] == state.weights()["tts"] and grown.weights()["music"] == [0.0, 0.0]


def test_older_states_carry_over(tmp_path):
    """Versions 1-3 kept an EMA per scored round: each uid becomes at most LEGACY_ANSWERS answers of its
    estimate (version 1 had no counts: a uid with a score counts as scored for long)."""
    path = tmp_path / "state.json"
    legacy = {"version": 1, "round": 3, "last_weights_block": 9, "hotkeys": ["a", "b"]}
    path.write_text(json.dumps({**legacy, "scores": {"tts": [0.5, 0.0], "vc": [0.4, 0.0], "music": [0.9, 0.0]}}))
    state = ScoreState.load(str(path), SERVICES)
    assert state.answers()["tts"] == [V1_ROUNDS, 0] and state.round == 3
    assert state.estimates()["tts"][0] == pytest.approx(0.5) and state.records["tts"].weight[0] == LEGACY_ANSWERS
    v3 = {**legacy, "version": 3, "emas": {"tts": [0.005 * 0.8, 0.0]}, "counts": {"tts": [1, 0]}}
    path.write_text(json.dumps(v3))
    carried = ScoreState.load(str(path), ("tts",))
    assert carried.estimates()["tts"][0] == pytest.approx(0.8) and carried.answers()["tts"] == [1, 0]


def test_a_version_4_state_loads_without_coverage_and_the_coverage_is_saved_from_version_5(tmp_path):
    path = tmp_path / "state.json"
    state = ScoreState(SERVICES, round=4, curve=EAGER)
    state.sync(["a", "b"])
    state.update("tts", 1, 0.8)
    path.write_text(json.dumps({k: v for k, v in state.to_json().items() if k != "coverage"} | {"version": 4}))
    old = ScoreState.load(str(path), SERVICES, EAGER)
    assert old.coverage is None and old.records["tts"].as_lists() == state.records["tts"].as_lists()
    assert Coverage.from_json(old.coverage, np.random.default_rng()).passes == 0  # a new pass
    coverage = Coverage(np.random.default_rng(0))
    coverage.take([0, 1, 2], 1)
    coverage.scored([2], now=123.456789, judging_s=0.5)
    old.coverage = coverage.as_json()
    old.save(str(path))
    again = Coverage.from_json(ScoreState.load(str(path), SERVICES, EAGER).coverage, np.random.default_rng())
    assert again.queue == coverage.queue and again.last_scored == {2: 123.456789} and again.per_miner_s == 0.5
    path.write_text(json.dumps({**state.to_json(), "coverage": {"queue": "x"}}))
    with pytest.raises(ConfigError, match="coverage"):
        Coverage.from_json(ScoreState.load(str(path), SERVICES, EAGER).coverage, np.random.default_rng())


def test_a_new_signed_model_starts_a_new_record_like_a_new_hotkey(tmp_path):
    """An upgrade that says so is judged on its new answers at once; the same name keeps the record; a state
    saved before models were kept (version 5) learns the name without dropping anything; a failed query has no
    model."""
    path = str(tmp_path / "state.json")
    state = ScoreState(("tts",), curve=EAGER)
    state.sync(["a", "b"])
    for _ in range(5):
        state.update("tts", 0, 0.5, model="old-tts")
        state.update("tts", 1, 0.5)
    state.update("tts", 0, 0.0, failed=True)
    assert state.answers()["tts"] == [6, 5] and state.models["tts"] == ["old-tts", ""]
    assert state.update("tts", 0, 0.9, model="new-tts") == 0.9 and state.answers()["tts"] == [1, 5]
    state.update("tts", 1, 0.5, model="first-name-seen")
    assert state.answers()["tts"][1] == 6
    state.mechanism_blocks[0] = 77
    state.save(path)
    restored = ScoreState.load(path, ("tts",), EAGER)
    assert restored.models == state.models and restored.mechanism_blocks == {0: 77}
    v5 = {k: v for k, v in state.to_json().items() if k not in ("models", "mechanism_blocks")} | {"version": 5}
    v5["records"]["tts"] = {k: v for k, v in v5["records"]["tts"].items() if not k.startswith(("drop", "rise"))}
    v5["records"]["tts"]["recent"] = [0.1, 0.2]  # version 5's recent answers: no longer kept
    with open(path, "w") as handle:
        json.dump(v5, handle)
    old = ScoreState.load(path, ("tts",), EAGER)
    assert old.models == {"tts": ["", ""]} and old.estimates() == state.estimates() and old.mechanism_blocks == {}
    old.update("tts", 0, 0.9, model="new-tts")
    assert old.answers()["tts"][0] == 2


def steady_vc_state(services: tuple[str, ...]) -> tuple[ScoreState, np.random.Generator]:
    """Three uids with 200 voice clone answers each around 0.8 (long, steady records), and the generator."""
    state = ScoreState(services, curve=EAGER)
    state.sync(["a", "b", "c"])
    rng = np.random.default_rng(0)
    for _ in range(200):
        for uid in range(3):
            state.update("vc", uid, float(np.clip(0.8 + 0.1 * rng.standard_normal(), 0, 1)))
    return state, rng


def test_a_miner_whose_answers_may_have_changed_is_doubted_until_told():
    """Two answers far below a long record: its drop statistic is past half its threshold, so the validator asks
    it again first; steady miners are not doubted."""
    state, _ = steady_vc_state(("tts", "vc"))
    assert state.doubted() == []
    for _ in range(2):
        state.update("vc", 1, 0.2)
    assert state.doubted() == [1]


def test_a_new_hotkey_is_asked_first_until_its_record_supports_its_weight():
    """A hotkey that replaces a uid (its record starts again) is doubted, so the validator asks it first, until its
    own record is known to within the curve's `ready_error`; miners with long records are not."""
    state, rng = steady_vc_state(("vc",))
    assert state.doubted() == []
    state.sync(["a", "b", "newcomer"])
    assert state.doubted() == [2]
    for _ in range(200):
        state.update("vc", 2, float(np.clip(0.9 + 0.1 * rng.standard_normal(), 0, 1)))
    assert state.doubted() == []


def test_unreadable_state_is_a_clear_config_error(tmp_path):
    path = tmp_path / "state.json"
    for content in ("{not json", '{"version": 99}', "[1, 2]", '{"version": 4, "hotkeys": 3}'):
        path.write_text(content)
        with pytest.raises(ConfigError, match="state"):
            ScoreState.load(str(path), SERVICES)


def test_the_curves_view_explains_the_weights():
    """What the report draws: a uid is paid exactly where it is eligible and its bound over the reference is above
    the floor (the cheap TTS at well under the reference gets weight 0)."""
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b", "c"])
    for _ in range(4):
        for uid, reward in ((0, 0.8), (1, 0.78), (2, 0.34)):
            state.update("tts", uid, reward)
    view, weights = state.curve_view()["tts"], state.weights()["tts"]
    assert view["reference"] > 0 and view["eligible"] == [True, True, True]
    for bound, weight in zip(view["bounds"], weights):
        assert (weight > 0) == (bound / view["reference"] > EAGER.floor), (view, weights)
    assert weights[2] == 0.0 and weights[0] > 0
