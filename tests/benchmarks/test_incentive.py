"""The incentive study: its subnet (the measured samples, 256 uids, validators at their defaults, Yuma per
mechanism) and the properties of the validator's curve on it, what `audionet-bench incentive` chose it by."""

import json
import os

import numpy as np
import pytest

from audionet.benchmarks.incentive import main as incentive
from audionet.benchmarks.incentive.checks import check_all
from audionet.benchmarks.incentive.population import N_UIDS, SPREAD, population, samples_from_report
from audionet.benchmarks.incentive.scorers import Gated, PerService
from audionet.benchmarks.incentive.sim import simulate
from audionet.lib.validator.incentive import CURVE
from tests.files import REPO, load_json

SAMPLES = os.path.join(REPO, incentive.SAMPLES)


@pytest.fixture(scope="module")
def samples():
    return samples_from_report(load_json(SAMPLES))


def test_the_subnet_has_256_uids_every_class_and_answers_drawn_from_the_samples(samples):
    groups = population(samples)
    assert sum(g.count for g in groups) == N_UIDS
    kinds = {g.kind for g in groups}
    assert {"honest", "cheap", "cheat", "partial cheat", "copy", "specialist", "turned", "newcomer", "flaky"} <= kinds
    honest = {g.quality for g in groups if g.kind == "honest"}
    assert min(honest) == SPREAD[0] == 0.7 and max(honest) == 1.0
    partial = next(g for g in groups if g.kind == "partial cheat").answers["vc"]
    cheat = samples.scores["vc"][samples.best_attack("vc")]
    assert np.isin(partial, cheat).mean() == pytest.approx(0.25, abs=0.02)  # a quarter of its answers cheat
    assert all(set(g.answers) == {"tts"} for g in groups if g.name == "tts specialist")


def test_a_short_subnet_pays_no_cheat_and_a_specialist_only_where_it_serves(samples):
    """Eighteen simulated hours at the validator's defaults, on one mechanism per service; every check reads
    the run."""
    scorer = PerService(CURVE, tuple(samples.services))
    run = simulate(population(samples, newcomer_h=13.0), samples.services, scorer, 18.0, 13.0, fine_from_h=11.0)
    late = run.incentive[run.event_epoch - 2 : run.event_epoch]
    cheats = run.uids(lambda g: g.kind == "cheat")
    assert late[:, :, cheats].max() == 0.0
    tts, vc = run.mechanisms.index("tts"), run.mechanisms.index("vc")
    specialist = run.uids(lambda g: g.name == "tts specialist")
    assert late[:, tts, specialist].min() > 0 and late[:, vc, specialist].max() == 0.0
    assert run.validator_trust[-1].max() <= 1.0 + 1e-9 and run.incentive[-1].sum(axis=1) == pytest.approx(1.0)
    checks = check_all(run)
    assert len(checks) >= 14 and checks["full-time cheats: most any earned in an epoch"].ok


@pytest.mark.slow
def test_the_validators_curve_keeps_the_properties_the_study_chose_it_by(samples):
    result = incentive.evaluate(PerService(CURVE, tuple(samples.services)), samples, seed=0)
    checks = result["checks"]
    for name in (
        "weight/best rises per 0.01 of quality (max)",
        "a uid at 0.90: std / mean over epochs (max)",
        "honest validators' trust (min, 2x noise included)",
        "espeak class / neural, per uid (where a cheap engine exists)",
        "full-time cheats: most any earned in an epoch",
        "25 % partial cheat: pay lost (least over services)",
        "turned cheat: minutes until most stake sets it 0",
        "better newcomer out-earns the best: minutes (most stake)",
        "one-service specialist / best all-rounder, in its service",
        "6 copies / 6 x one copy",
        "a restart: weight moved at its first setting after (vs not restarting)",
        "adding music: weight moved in the services it scored (vs not adding it)",
        "fresh validator: share of its weight on cheats (first 2 h)",
    ):
        assert checks[name].ok, (name, checks[name])


@pytest.mark.slow
def test_the_curve_before_had_a_cliff_and_paid_no_specialist(samples):
    """What issue 33 found: gates that multiply make pay rise like a softmax between 0.86 and 0.93 of the best,
    and a miner that serves one service earns nothing."""
    checks = incentive.evaluate(Gated(), samples, seed=0, copies=False)["checks"]
    assert checks["weight/best rises per 0.01 of quality (max)"].value > 0.1
    assert checks["one-service specialist / best all-rounder, in its service"].value == 0.0


@pytest.mark.slow
def test_the_study_command_writes_its_tables_json_and_plot(tmp_path, capsys):
    code = incentive.main(["--samples", SAMPLES, "--quick", "--warm-up", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    stem = tmp_path / "cpu-x86_64-2core" / "incentive-offline"  # beside the samples' device
    data = json.loads(stem.with_suffix(".json").read_text())
    assert stem.with_suffix(".png").stat().st_size > 10_000
    assert "## Weight against true quality" in stem.with_suffix(".md").read_text() and "## Properties" in out
    assert data["command"].startswith("audionet-bench incentive --samples") and len(data["swept"]) == 1
    assert set(data["chosen"]["checks"]) == set(data["before"]["checks"]) | set(data["chosen"]["checks"])
    assert code in (0, 1)
