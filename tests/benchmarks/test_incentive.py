"""The incentive study: Yuma consensus by its published rule, and the properties of the validator's curve
on the measured score samples (what `audionet-bench incentive` chose it by)."""

import json
import os

import numpy as np
import pytest

from audionet.benchmarks.incentive import main as incentive
from audionet.benchmarks.incentive.main import CURRENT, Candidate, evaluate, rank_reward
from audionet.benchmarks.incentive.sim import classes_from_report, yuma
from audionet.lib.validator.incentive import CURVE
from tests.files import REPO, load_json

SAMPLES = os.path.join(REPO, incentive.SAMPLES)
ROUNDS = 600


@pytest.fixture(scope="module")
def classes():
    return classes_from_report(load_json(SAMPLES))


def test_yuma_clips_each_weight_to_the_stake_weighted_median():
    """Two honest validators (80% of stake) and one that gives everything to miner 2: its weight is
    clipped to the consensus (0), so it pays nobody and its trust is 0."""
    weights = np.array([[0.5, 0.5, 0.0], [0.6, 0.4, 0.0], [0.0, 0.0, 1.0]])
    incentive_, trust = yuma(weights, np.array([0.5, 0.3, 0.2]))
    ranks = np.array([0.5 * 0.5 + 0.3 * 0.5, 0.5 * 0.5 + 0.3 * 0.4, 0.0])
    assert incentive_ == pytest.approx(ranks / ranks.sum())
    assert trust == pytest.approx([1.0, 0.9, 0.0])


def test_yuma_with_one_validator_pays_its_own_weights():
    weights = np.array([[2.0, 1.0, 1.0]])
    incentive_, trust = yuma(weights, np.array([1.0]))
    assert incentive_ == pytest.approx([0.5, 0.25, 0.25]) and trust == pytest.approx([1.0])


def test_the_old_rank_reward_is_half_raw_half_rank():
    assert rank_reward(np.array([0.8, 0.0, 0.4, 0.4, 0.9])) == pytest.approx([0.775, 0.0, 0.3875, 0.3875, 0.95])


def test_the_validators_curve_keeps_every_property_with_one_validator(classes):
    result = evaluate(Candidate("chosen", CURVE), classes, ROUNDS, seed=0)
    failed = {name: check for name, check in result["checks"].items() if not check.ok}
    assert not failed, failed
    shares = result["shares"]
    assert shares["espeak-class"]["share"] < 0.01 and shares["1 s loop"]["share"] == 0.0


def test_the_validators_curve_keeps_every_property_under_yuma_consensus(classes):
    result = evaluate(Candidate("chosen", CURVE), classes, ROUNDS, seed=0, validators=6)
    failed = {name: check for name, check in result["checks"].items() if not check.ok}
    assert not failed, failed
    assert result["checks"]["validator trust (up to date)"].value >= 0.95


def test_the_mapping_before_the_study_paid_cheap_engines_and_cheats(classes):
    """What the study exists to fix: linear weights let the espeak class earn about 80% of a neural
    miner and cheats earn a share."""
    result = evaluate(Candidate("current", CURRENT, rank_reward=True), classes, ROUNDS, seed=0, copies=False)
    checks = result["checks"]
    assert checks["espeak class / neural"].value > 0.6 and not checks["cheat uids earning"].ok
    assert checks["100 cheat uids together"].value > 0.1


def test_the_study_command_writes_its_tables_json_and_plot(tmp_path, capsys):
    code = incentive.main(["--samples", SAMPLES, "--rounds", "200", "--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    stem = tmp_path / "cpu-x86_64-2core" / "incentive-offline"  # beside the samples' device
    data = json.loads(stem.with_suffix(".json").read_text())
    assert stem.with_suffix(".png").stat().st_size > 10_000
    assert "## Weight share by class" in stem.with_suffix(".md").read_text() and "## Properties" in out
    assert data["command"].startswith("audionet-bench incentive --samples") and data["rounds"] == 200
    assert code == (0 if data["chosen"] else 1) and len(data["swept"]) == 12
