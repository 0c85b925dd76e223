"""Real miner and validator processes on loopback log their timings: the
miner's generation per service and stage, the validator's round trips per
miner and its evaluation, to JSONL and to an offline W&B run each."""

import json
import os
import signal
import time

import pytest

from audionet.lib.localnet import LocalNet
from audionet.lib.validator.verdicts import COLUMNS
from tests.files import load_json
from tests.wandb_offline import read_run_file, run_files

pytestmark = pytest.mark.timeout(300)


def jsonl(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle]


def test_neurons_log_generation_roundtrip_and_evaluation(tmp_path):
    net = LocalNet(str(tmp_path))
    net.add_validator()
    # No periodic flush during the test: what the miner logs, it logs when it is stopped.
    miner = net.add_miner("m0", extra_args=("--services", "tts,music", "--telemetry.interval", "3600"))
    try:
        net.wait_ready()
        assert net.run_validator(2, extra_args=["--neuron.services", "tts,music", "--neuron.seed", "3"]) == 0
    finally:
        started = time.monotonic()
        net.stop()  # SIGTERM to the miner's process group, SIGKILL after 5 s
        stop_s = time.monotonic() - started
    # it ended by itself (uvicorn re-raises SIGTERM after its shutdown), not by the SIGKILL
    assert miner.process.returncode == -signal.SIGTERM and stop_s < 5, (miner.process.returncode, stop_s)
    miner_log = os.path.join(tmp_path, "telemetry", "m0", "timing.jsonl")
    assert os.path.exists(miner_log), "the miner wrote no timing record before it stopped"
    last = jsonl(miner_log)[-1]
    assert last["role"] == "miner" and last["device"].startswith("cpu-")
    assert last["scalars"]["timing/tts/generation/count"] == 2
    assert last["scalars"]["timing/music/generation/count"] == 2
    assert 0 < last["scalars"]["timing/tts/generation/rtf"] < 5

    validator_record = jsonl(os.path.join(tmp_path, "telemetry", "validator", "timing.jsonl"))[-1]
    validator = validator_record["scalars"]
    assert validator["timing/tts/roundtrip/count"] == 2 and validator["timing/music/roundtrip/count"] == 2
    assert validator[f"timing/tts/roundtrip/uid{miner.uid}/count"] == 2
    assert validator["timing/all/evaluation/count"] == 2
    # a round trip includes the miner's generation, so it cannot be shorter
    assert validator["timing/music/roundtrip/min_s"] >= last["scalars"]["timing/music/generation/min_s"]
    # the network view: the miner's signed generation times under the device it reports (its CPU slug here)
    gpu = last["device"]
    assert validator[f"network/{gpu}/music/count"] == 2 and validator[f"network/{gpu}/tts/miners"] == 1
    assert validator[f"network/{gpu}/music/max_s"] == pytest.approx(last["scalars"]["timing/music/generation/max_s"])
    assert {(row["gpu"], row["service"]) for row in validator_record["network"]} == {(gpu, "tts"), (gpu, "music")}

    # each neuron wrote a complete offline W&B run (localnet never goes online): the validator's
    # when it exited by itself, the miner's when it was stopped with SIGTERM
    files = run_files(str(tmp_path))
    assert len(files) == 2
    runs = {run["config"].get("role"): run for run in (read_run_file(path, timeout=5) for path in files)}
    assert runs["validator"]["config"]["uid"] == net.validator_uid
    assert runs["validator"]["history"][-1]["timing/music/roundtrip/count"] == 2
    assert runs["miner"]["config"]["uid"] == miner.uid and runs["miner"]["exited"]
    assert runs["miner"]["history"][-1]["timing/tts/generation/count"] == 2

    # each round's verdicts: a table per service in the validator's run, with every column rounds.jsonl has
    verdict_steps = [step for step in runs["validator"]["history"] if "verdicts/rows" in step]
    assert [step["verdicts/rows"] for step in verdict_steps] == [2, 2]  # tts and music from one miner, 2 rounds
    files = os.path.join(os.path.dirname(runs["validator"]["path"]), "files")
    results = [r for record in net.round_records() for r in record["results"]]
    for service in ("tts", "music"):
        table = load_json(os.path.join(files, verdict_steps[-1][f"tables/verdicts/{service}/path"]))
        components = {name for r in results if r["service"] == service for name in r["components"]}
        assert table["columns"][: len(COLUMNS)] == list(COLUMNS) and set(table["columns"]) > components
        (row,) = [dict(zip(table["columns"], data)) for data in table["data"]]
        assert row["uid"] == miner.uid and row["hotkey"] == miner.hotkey and row["device"] == gpu
