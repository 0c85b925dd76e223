"""Sinks: an offline W&B run read back from its .wandb file, the JSONL log,
automatic offline mode with no API key, a W&B failure that must not break
anything, and device facts on a machine with no GPU."""

import json
import os

import pytest

from audionet.lib.core.devices import DeviceMonitor, describe, device_slug
from audionet.lib.core.telemetry import Telemetry
from audionet.lib.core.telemetry_settings import WandbSettings
from audionet.lib.core.timing import Timer
from tests.files import load_json, read_text
from tests.gated import wait_until
from tests.wandb_offline import read_run


def filled_timer() -> Timer:
    timer = Timer("miner", device="cpu-test")
    for seconds in (1.0, 2.0, 3.0):
        timer.record("tts", "generation", seconds, audio_seconds=4.0)
    timer.record("music", "generation/decoder", 0.25)
    return timer


def test_offline_wandb_run_holds_the_logged_keys_values_and_config(wandb_offline):
    timer = filled_timer()
    config = {"role": "miner", "hotkey": "5Fake", "uid": 7, "device": {"slug": "cpu-test"}, "version": "0.1.0"}
    telemetry = Telemetry(timer, str(wandb_offline / "log"), config, WandbSettings(project="audionet-test"))
    assert telemetry.run is not None
    logged = telemetry.flush()
    timer.record("tts", "generation", 6.0, audio_seconds=4.0)
    telemetry.close()  # flushes once more, then finishes the run

    run = read_run(str(wandb_offline))
    assert {k: run["config"][k] for k in config} == config
    first, last = run["history"][0], run["history"][-1]
    assert first["timing/tts/generation/avg_s"] == 2.0 and first["timing/tts/generation/count"] == 3
    assert first["timing/tts/generation/min_s"] == 1.0 and first["timing/tts/generation/max_s"] == 3.0
    assert first["timing/tts/generation/rtf"] == pytest.approx(0.5)
    assert first["timing/music/generation/decoder/avg_s"] == 0.25
    assert {k for k in first if k.startswith("timing/")} == set(logged)
    assert last["timing/tts/generation/count"] == 4 and last["timing/tts/generation/max_s"] == 6.0
    assert first["tables/cpu-test/tts/_type"] == "table-file" and first["tables/cpu-test/tts/nrows"] == 1
    table_file = os.path.join(os.path.dirname(run["path"]), "files", first["tables/cpu-test/tts/path"])
    table = load_json(table_file)
    row = dict(zip(table["columns"], table["data"][0]))
    assert row["service"] == "tts" and row["avg_s"] == 2.0 and row["device"] == "cpu-test"

    lines = [json.loads(line) for line in read_text(telemetry.jsonl_path).splitlines()]
    assert [line["step"] for line in lines] == [1, 2]
    assert lines[0]["scalars"] == logged and lines[1]["scalars"]["timing/tts/generation/count"] == 4


def test_the_network_view_goes_to_wandb_and_jsonl_with_bounded_keys(wandb_offline):
    from audionet.lib.validator.network_view import OTHER, NetworkView, gpu_name

    view = NetworkView(max_gpus=2)
    view.record("NVIDIA GeForce RTX 3090", "tts", 1.0, 4.0, uid=1)
    view.record("NVIDIA GeForce RTX 3090", "tts", 3.0, 4.0, uid=2)
    view.record("nvidia-h100-80gb-hbm3", "music", 2.0, 10.0, uid=3)
    for n in range(50):  # a miner that makes up a new GPU name for every answer
        view.record(f"gpu {n} " + "x" * 500, "tts", 0.5, 1.0, uid=4)
    assert gpu_name("../../etc/passwd\n") == "etc-passwd" and gpu_name("") == "unknown"
    assert len(gpu_name("A" * 1000)) == 48
    telemetry = Telemetry(
        Timer("validator", device="cpu-test"),
        str(wandb_offline / "log"),
        {"role": "validator"},
        WandbSettings(project="audionet-test"),
        sources=(view,),
    )
    logged = telemetry.flush()
    telemetry.close()
    assert logged["network/nvidia-geforce-rtx-3090/tts/avg_s"] == 2.0
    assert logged["network/nvidia-geforce-rtx-3090/tts/min_s"] == 1.0
    assert logged["network/nvidia-geforce-rtx-3090/tts/max_s"] == 3.0
    assert logged["network/nvidia-geforce-rtx-3090/tts/miners"] == 2
    assert logged["network/nvidia-h100-80gb-hbm3/music/rtf"] == 0.2
    assert logged[f"network/{OTHER}/tts/count"] == 50
    assert {k.split("/")[1] for k in logged if k.startswith("network/")} == {
        "nvidia-geforce-rtx-3090",
        "nvidia-h100-80gb-hbm3",
        OTHER,
    }
    run = read_run(str(wandb_offline))
    assert run["history"][0]["network/nvidia-geforce-rtx-3090/tts/avg_s"] == 2.0
    assert run["history"][0]["tables/network/nrows"] == 3
    record = json.loads(read_text(telemetry.jsonl_path).splitlines()[0])
    rows = {(row["gpu"], row["service"]): row for row in record["network"]}
    assert rows[("nvidia-geforce-rtx-3090", "tts")]["count"] == 2 and rows[(OTHER, "tts")]["miners"] == 1


def test_no_api_key_means_offline(tmp_path, monkeypatch):
    for name in ("WANDB_MODE", "WANDB_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    monkeypatch.setenv("NETRC", str(tmp_path / "absent-netrc"))
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    telemetry = Telemetry(filled_timer(), str(tmp_path / "log"), {"role": "validator"}, WandbSettings())
    telemetry.close()
    assert read_run(str(tmp_path))["history"][0]["timing/tts/generation/count"] == 3


def test_wandb_failure_is_one_warning_and_jsonl_continues(tmp_path, monkeypatch):
    import logging

    import wandb

    warnings = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = warnings.append
    logging.getLogger("telemetry").addHandler(handler)

    def broken_init(**_kwargs):
        raise wandb.errors.CommError("network is unreachable")

    monkeypatch.setattr(wandb, "init", broken_init)
    telemetry = Telemetry(filled_timer(), str(tmp_path), {"role": "miner"}, WandbSettings())
    telemetry.flush()
    telemetry.close()
    logging.getLogger("telemetry").removeHandler(handler)
    assert len(warnings) == 1 and "W&B is off" in warnings[0].getMessage() and "\n" not in warnings[0].getMessage()
    assert len(read_text(telemetry.jsonl_path).splitlines()) == 2


def test_wandb_off_writes_only_jsonl(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    telemetry = Telemetry(filled_timer(), str(tmp_path / "log"), {"role": "miner"}, WandbSettings(off=True))
    telemetry.start(0.05)

    def flushed() -> int:
        return len(read_text(telemetry.jsonl_path).splitlines()) if os.path.exists(telemetry.jsonl_path) else 0

    wait_until(lambda: flushed() >= 2, timeout_s=10, what="two periodic flushes")
    telemetry.close()
    assert not (tmp_path / "wandb").exists()
    assert flushed() >= 3  # the periodic flushes + the final one


def test_device_facts_without_a_gpu():
    info = describe()
    if info.kind == "cuda":
        pytest.skip("this check is for machines without a GPU; the GPU path is exercised by audionet-bench")
    assert info.cpu_cores == os.cpu_count() and info.cpu_model and info.compute_capability is None
    assert (
        info.slug == device_slug("cpu")
        and info.slug.startswith("cpu-")
        and info.slug.endswith(f"-{os.cpu_count()}core")
    )
    with DeviceMonitor() as monitor:
        sum(range(1000))
    assert monitor.result()["peak_torch_gb"] is None and monitor.result()["util_samples"] == 0
