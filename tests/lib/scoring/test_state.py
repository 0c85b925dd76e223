import json
import math
import os

from audionet.lib.scoring.state import ScoreState

SERVICES = ("tts", "vc", "music")


def test_ema_follows_the_formula_and_nan_never_reaches_weights():
    state = ScoreState(SERVICES)
    state.sync(["a", "b", "c"])
    assert state.update("tts", 0, 1.0, alpha=0.25) == 0.25
    assert state.update("tts", 0, 0.5, alpha=0.25) == 0.25 * 0.5 + 0.75 * 0.25
    state.update("tts", 1, float("nan"), alpha=0.25)
    state.update("music", 1, float("inf"), alpha=0.25)
    state.update("vc", 2, -3.0, alpha=0.25)
    weights = state.weights()
    assert all(math.isfinite(w) and w >= 0 for w in weights)
    assert abs(sum(weights) - 1.0) < 1e-12
    assert weights == [1.0, 0.0, 0.0]  # NaN, inf and negative rewards all count as 0


def test_changed_hotkey_resets_only_that_uid():
    state = ScoreState(SERVICES)
    state.sync(["a", "b"])
    state.update("vc", 0, 1.0, alpha=1.0)
    state.update("vc", 1, 1.0, alpha=1.0)
    assert state.sync(["a", "z", "new"]) == [1]
    assert state.scores["vc"] == [1.0, 0.0, 0.0]


def test_all_zero_scores_give_all_zero_weights():
    state = ScoreState(SERVICES)
    state.sync(["a", "b"])
    assert state.weights() == [0.0, 0.0]


def test_save_and_load_restore_exact_floats_atomically(tmp_path):
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES, round=7, last_weights_block=42)
    state.sync(["a", "b"])
    state.update("music", 1, 0.1234567890123, alpha=0.3)
    state.update("music", 1, 0.7, alpha=0.3)
    state.save(path)
    restored = ScoreState.load(path, SERVICES)
    assert restored == state
    assert os.listdir(tmp_path) == ["state.json"]  # no temp file left behind
    assert json.load(open(path))["scores"]["music"][1] == state.scores["music"][1]


def test_unreadable_state_is_a_clear_config_error(tmp_path):
    import pytest

    from audionet.lib.errors import ConfigError

    path = tmp_path / "state.json"
    for content in ("{not json", '{"version": 99}', "[1, 2]"):
        path.write_text(content)
        with pytest.raises(ConfigError, match="state"):
            ScoreState.load(str(path), SERVICES)


def test_a_miner_weight_is_the_mean_over_the_scored_services_only(tmp_path):
    """Columns of a service this validator no longer scores are kept in the file, not counted."""
    path = str(tmp_path / "state.json")
    state = ScoreState(SERVICES)
    state.sync(["a", "b"])
    state.update("tts", 0, 1.0, alpha=1.0)
    state.update("music", 1, 1.0, alpha=1.0)
    state.save(path)
    tts_only = ScoreState.load(path, ("tts",))
    assert tts_only.weights() == [1.0, 0.0] and tts_only.scores["music"] == [0.0, 1.0]
    assert state.weights() == [0.5, 0.5]
