"""audionet-bench pool with the miner's pool flags on two SIMULATED devices (this CPU, one padded to 3x):
each device measured alone, then the pool study (each alone, round-robin, speed-weighted) with its
report; and the one-line errors of the benchmark-only simulation flags."""

import os

import pytest

from audionet.benchmarks.common.simulated import NOTE
from audionet.benchmarks.device_tables import main as services
from audionet.benchmarks.pool import main as pool
from audionet.lib.core.devices import device_slug
from tests.files import load_json, markdown_tables, read_text

pytestmark = pytest.mark.timeout(300)
CPU = device_slug("cpu")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("pool-bench")
    flags = ["--services", "tts", "--tts.model", "baseline:espeak", "--pool.devices", "cpu,cpu"]
    flags += ["--simulate.slowdown", "1,3", "--simulate.floor", "0.1", "--runs", "1", "--warmup", "0", "--no-eval"]
    flags += ["--parallel", "", "--batches", "1,6", "--batch-rounds", "1", "--out", str(out)]
    assert pool.main(flags) == 0
    return out


@pytest.mark.slow
def test_each_simulated_device_alone_and_the_pool_study_are_written_and_labelled(results):
    fast, slow, pool = f"{CPU}-simulated-1x", f"{CPU}-simulated-3x", f"pool-{CPU}-simulated-1x+3x"
    assert sorted(os.listdir(results)) == sorted([fast, slow, pool])
    assert NOTE in read_text(os.path.join(results, slow, "tables.md"))
    assert load_json(os.path.join(results, slow, "benchmark_summary.json"))["simulated"]["slowdown"] == 3.0
    for name in ("pool.json", "pool.md", "pool.png"):
        assert os.path.getsize(os.path.join(results, pool, name)) > 0
    markdown = read_text(os.path.join(results, pool, "pool.md"))
    assert markdown.count(NOTE) >= 3 and "`--pool.devices cpu,cpu --pool.parallel 1,1`" in markdown
    assert markdown.startswith("Regenerate: `audionet-bench pool --services tts")
    dispatch, findings = markdown_tables(markdown)[-2:]
    assert len(dispatch) == 4 * 2  # (each alone, round-robin, weighted) x bursts 1 and 6
    assert [row["Burst"] for row in findings] == ["1", "6"]


@pytest.mark.slow
def test_the_weighted_pool_keeps_a_single_request_on_the_fast_device(results):
    summary = load_json(os.path.join(results, f"pool-{CPU}-simulated-1x+3x", "pool.json"))
    rows = summary["studies"]["tts"]["rows"]
    weighted = {r["batch"]: r for r in rows if r["policy"] == "weighted" and len(r["devices"]) == 2}
    robin = {r["batch"]: r for r in rows if r["policy"] == "round-robin"}
    assert weighted[1]["served"] == {f"{CPU}-simulated-1x": 1, f"{CPU}-simulated-3x": 0}
    assert sum(robin[6]["served"].values()) == 6 and min(robin[6]["served"].values()) == 3
    assert summary["simulated"] and summary["parallel"] == {"tts": [1, 1]}


@pytest.mark.parametrize(
    "flags, fragment",
    [
        (["--pool.devices", "cpu", "--simulate.slowdown", "1,3"], "one factor per --pool.devices entry"),
        (["--pool.devices", "cpu,cpu", "--simulate.slowdown", "1,0.5"], "factors >= 1"),
        (["--pool.devices", "cpu,cpu", "--pool.parallel", "1,1,1", "--simulate.slowdown", "1,3"], "3 counts for 2"),
    ],
)
def test_simulation_flags_fail_with_one_line(flags, fragment, tmp_path, capsys):
    flags += ["--services", "tts", "--runs", "1", "--warmup", "0", "--no-eval", "--parallel", "", "--batches", "1"]
    try:
        code = pool.main([*flags, "--out", str(tmp_path)])
    except SystemExit as stop:  # a flag argparse refuses; a ConfigError is returned
        code = stop.code
    errors = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(errors) == 1, errors
    assert errors[0].startswith("audionet-bench pool: ") and fragment in errors[0], errors


def test_the_pool_study_needs_two_devices_and_services_measures_each_alone(tmp_path, capsys):
    flags = ["--services", "tts", "--runs", "1", "--warmup", "0", "--no-eval", "--parallel", ""]
    assert pool.main([*flags, "--pool.devices", "cpu", "--out", str(tmp_path)]) == 2
    assert "two or more --pool.devices" in capsys.readouterr().err
    simulated = ["--pool.devices", "cpu,cpu", "--simulate.slowdown", "1,2", "--tts.model", "baseline:espeak"]
    assert services.main([*flags, *simulated, "--out", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == [f"{CPU}-simulated-1x", f"{CPU}-simulated-2x"]  # no pool study
