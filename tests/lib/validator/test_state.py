import json
import math
import os
from dataclasses import replace

import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.state import V1_ROUNDS, ScoreState

SERVICES = ("tts", "vc", "music")
EAGER = replace(CURVE, alpha=0.25, eligible_after=1, floor_slack=0.0)  # eligible and judged strictly from round one


def test_ema_follows_the_formula_and_nan_never_reaches_weights():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b", "c"])
    assert state.update("tts", 0, 1.0) == 0.25
    assert state.update("tts", 0, 0.5) == 0.25 * 0.5 + 0.75 * 0.25
    assert state.counts["tts"] == [2, 0, 0]
    for service in ("vc", "music"):
        state.update(service, 0, 0.5)
    for service, reward in (("tts", float("nan")), ("vc", float("inf")), ("music", -3.0)):
        state.update(service, 1, reward)
        state.update(service, 2, reward)
    weights = state.weights()
    assert all(math.isfinite(w) and w >= 0 for w in weights)
    assert weights == [1.0, 0.0, 0.0]  # NaN, inf and negative rewards all count as 0


def test_the_estimate_is_the_weighted_mean_of_what_a_uid_has_shown():
    """Divided by 1 - (1 - alpha)^n: after two rounds of 0.8 the estimate is 0.8, not 0.8 x 0.4375."""
    state = ScoreState(("tts",), curve=EAGER)
    state.sync(["a"])
    state.update("tts", 0, 0.8)
    state.update("tts", 0, 0.8)
    assert state.emas["tts"][0] == pytest.approx(0.8 * (1 - 0.75**2))
    assert state.estimates()["tts"][0] == pytest.approx(0.8)
    assert state.combined() == [pytest.approx(0.8)]


def test_changed_hotkey_resets_only_that_uid():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    state.update("vc", 0, 1.0)
    state.update("vc", 1, 1.0)
    assert state.sync(["a", "z", "new"]) == [1]
    assert state.emas["vc"] == [0.25, 0.0, 0.0] and state.counts["vc"] == [1, 0, 0]


def test_all_zero_scores_give_all_zero_weights():
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    assert state.weights() == [0.0, 0.0]
    for uid in (0, 1):
        for service in SERVICES:
            state.update(service, uid, 0.0)
    assert state.weights() == [0.0, 0.0]


def test_no_weight_before_eligible():
    state = ScoreState(("tts",), curve=replace(CURVE, eligible_after=3))
    state.sync(["a"])
    for _ in range(2):
        state.update("tts", 0, 0.9)
        assert state.weights() == [0.0]
    state.update("tts", 0, 0.9)
    assert state.weights() == [1.0]


def test_save_and_load_restore_exact_floats_atomically(tmp_path):
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES, round=7, last_weights_block=42, curve=EAGER)
    state.sync(["a", "b"])
    state.update("music", 1, 0.1234567890123)
    state.update("music", 1, 0.7)
    state.save(path)
    restored = ScoreState.load(path, SERVICES, EAGER)
    assert restored == state and restored.curve == EAGER
    assert os.listdir(tmp_path) == ["state.json"]  # no temp file left behind
    saved = json.load(open(path))
    assert saved["emas"]["music"][1] == state.emas["music"][1] and saved["counts"]["music"] == [0, 2]


def test_a_version_1_state_carries_over_as_long_scored(tmp_path):
    """v1 had no round counts: a uid with a score counts as scored for long (its EMA needs no correction)."""
    path = tmp_path / "state.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "round": 3,
                "last_weights_block": 9,
                "hotkeys": ["a", "b"],
                "scores": {"tts": [0.5, 0.0], "vc": [0.4, 0.0], "music": [0.9, 0.0]},
            }
        )
    )
    state = ScoreState.load(str(path), SERVICES)
    assert state.counts["tts"] == [V1_ROUNDS, 0] and state.round == 3
    assert state.estimates()["tts"][0] == pytest.approx(0.5)
    assert state.weights() == [1.0, 0.0]


def test_unreadable_state_is_a_clear_config_error(tmp_path):
    path = tmp_path / "state.json"
    for content in ("{not json", '{"version": 99}', "[1, 2]"):
        path.write_text(content)
        with pytest.raises(ConfigError, match="state"):
            ScoreState.load(str(path), SERVICES)


def test_a_miner_weight_combines_the_scored_services_only(tmp_path):
    """Columns of a service this validator no longer scores are kept in the file, not counted."""
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES, curve=EAGER)
    state.sync(["a", "b"])
    for service in SERVICES:
        state.update(service, 0, 1.0 if service == "tts" else 0.5)
        state.update(service, 1, 0.2 if service == "tts" else 1.0)
    state.save(path)
    tts_only = ScoreState.load(path, ("tts",), EAGER)
    assert tts_only.weights() == [1.0, 0.0] and tts_only.emas["music"] == state.emas["music"]
    assert ScoreState.load(path, ("vc", "music"), EAGER).weights() == [0.0, 1.0]
