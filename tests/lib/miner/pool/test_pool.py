"""The device pool with two simulated devices on this CPU (a real espeak backend, one copy padded to
3x the time of the other: SIMULATED, this machine has no GPU): speed-weighted dispatch behind the
stake line, per-device timing keys, /v1/health per device, and the pool flags."""

import asyncio
import json

import numpy as np
import pytest

from audionet.benchmarks.common.simulated import simulated_replicas
from audionet.benchmarks.pool.main import burst, fresh_pool
from audionet.lib import services
from audionet.lib.core.devices import resolve_devices
from audionet.lib.core.errors import BackendError, ConfigError
from audionet.lib.core.timing import Timer
from audionet.lib.miner import health
from audionet.lib.miner.pool import PoolSettings, device_labels
from audionet.lib.services import TTS, registry

pytestmark = pytest.mark.timeout(300)
FLOOR = 0.2  # simulated seconds per audio second of the fast device (the slow one: 3x)


@pytest.fixture(scope="module")
def replicas():
    fast, slow = simulated_replicas(TTS, "baseline:espeak", [1.0, 3.0], [1, 1], seconds_per_audio_s=FLOOR)
    yield fast, slow
    for replica in (fast, slow):
        replica.close()


def requests(n, seed=0):
    rng = np.random.default_rng(seed)
    return [TTS.draw(rng) for _ in range(n)]


@pytest.mark.slow
def test_small_burst_stays_on_the_fast_device_and_beats_round_robin(replicas):
    fast, slow = replicas
    weighted = asyncio.run(burst(fresh_pool("tts", replicas, "weighted"), "tts", requests(2)))
    robin = asyncio.run(burst(fresh_pool("tts", replicas, "round-robin"), "tts", requests(2)))
    assert weighted["served"] == {fast.name: 2}  # the slow device would finish its request last
    assert robin["served"] == {fast.name: 1, slow.name: 1}
    assert weighted["makespan_s"] < robin["makespan_s"]


@pytest.mark.slow
def test_large_burst_uses_the_slow_device_and_beats_the_fast_one_alone(replicas):
    fast, slow = replicas
    pool = fresh_pool("tts", replicas, "weighted")
    both = asyncio.run(burst(pool, "tts", requests(10, seed=1)))
    alone = asyncio.run(burst(fresh_pool("tts", [fast], "weighted"), "tts", requests(10, seed=1)))
    assert 1 <= both["served"][slow.name] < both["served"][fast.name]
    assert both["makespan_s"] < alone["makespan_s"]


@pytest.mark.slow
def test_every_replica_times_under_its_own_device_and_the_miner_wide_key_counts_all(replicas):
    fast, slow = replicas
    timer = Timer("miner", device="pool")
    pool = fresh_pool("tts", replicas, "weighted", timer)
    asyncio.run(burst(pool, "tts", requests(8, seed=2)))
    snapshot = timer.snapshot()
    per_device = {label: snapshot[("miner", "tts", "generation", label)].count for label in (fast.name, slow.name)}
    assert sum(per_device.values()) == snapshot[("miner", "tts", "generation", "pool")].count == 8
    devices = health.devices(pool)
    assert {label: row["served"] for label, row in devices.items()} == per_device
    assert all(row["busy"] == 0 and row["waiting"] == 0 for row in devices.values())
    assert "simulated-3x" in slow.name and pool.dispatchers["tts"].estimate(slow) > pool.dispatchers["tts"].estimate(
        fast
    )


def test_health_and_signed_answers_name_the_replica_device(replicas, tmp_path, wallets):
    from fastapi.testclient import TestClient

    from audionet.lib.core.auth import AccessPolicy, sign_request
    from audionet.lib.core.chain import OfflineChain
    from audionet.lib.core.protocol import unpack_response
    from audionet.lib.miner.app import MinerApp

    fast, slow = replicas
    chain = OfflineChain(str(tmp_path / "chain.sqlite"))
    miner, validator = wallets("miner"), wallets("validator")
    chain.register(
        validator.hotkey.ss58_address, validator.coldkeypub.ss58_address, stake=1000.0, validator_permit=True
    )
    chain.register(miner.hotkey.ss58_address, miner.coldkeypub.ss58_address)
    pool = fresh_pool("tts", replicas, "weighted")
    service = MinerApp(miner, chain, pool, AccessPolicy())
    body = json.dumps({"text": "Which device am I on?", "seed": 1}).encode()
    with TestClient(service.app()) as client:
        reply = client.post(
            "/v1/tts", content=body, headers=sign_request(validator, "/v1/tts", body, miner.hotkey.ss58_address)
        )
        signed = sign_request(validator, "/v1/health", b"", miner.hotkey.ss58_address, method="GET")
        health = client.get("/v1/health", headers=signed).json()
        public = client.get("/v1/health").json()
    assert reply.status_code == 200, reply.text
    assert public == {"status": "ok"}  # liveness only, for anyone
    meta, _flac = unpack_response(reply.content)
    assert meta.device == fast.name  # nothing measured yet: the warm-up prior already says which is faster
    assert service.pool.dispatchers["tts"].capacity == 2
    assert set(health["devices"]) == {fast.name, slow.name} and health["devices"][fast.name]["served"] == 1
    assert [r["label"] for r in health["services"]["tts"]["replicas"]] == [fast.name, slow.name]


def test_pool_flags_and_devices(monkeypatch):
    import argparse

    parser = argparse.ArgumentParser()
    PoolSettings.add_flags(parser, services=registry.all_services())
    args = parser.parse_args(["--pool.devices", "cpu,cpu", "--pool.parallel", "2,1", "--pool.parallel.music", "1"])
    assert resolve_devices(args.pool_devices) == ["cpu", "cpu"] and resolve_devices("auto") == ["cpu"]
    settings = PoolSettings.from_flags(args)
    assert settings.parallel_counts("tts", 2) == [2, 1] and settings.parallel_counts("music", 2) == [1, 1]
    with pytest.raises(ConfigError, match="--pool.parallel gives 2 counts for 3 devices"):
        settings.parallel_counts("tts", 3)
    for bad, fragment in (
        ("cuda:1", "no CUDA GPU"),
        ("auto,cpu", "auto alone"),
        ("tpu", "unknown device"),
        ("", "auto alone"),
    ):
        with pytest.raises(BackendError, match=fragment) as info:
            resolve_devices(bad, flag="--pool.devices")
        assert str(info.value).startswith("--pool.devices: ") and "\n" not in str(info.value)
    with pytest.raises(SystemExit):
        parser.parse_args(["--pool.parallel", "2,0"])
    assert device_labels(["cpu"]) == [device_labels(["cpu", "cpu"])[0][: -len("-r1")]]
    assert len(set(device_labels(["cpu", "cpu"]))) == 2
    assert {f"pool_parallel_{s.name}" for s in services.all_services()} <= set(vars(args))


def test_ray_devices_are_kinds_not_indices():
    from audionet.lib.miner.pool.ray_actors import ray_devices

    assert ray_devices("auto", 3.0) == ["cuda"] * 3 and ray_devices("auto", 0.0) == ["cpu"]
    assert ray_devices("cpu,cpu", 0.0) == ["cpu", "cpu"] and ray_devices("cuda, cpu", 1.0) == ["cuda", "cpu"]
    with pytest.raises(ConfigError, match="Ray picks the GPU") as info:
        ray_devices("cuda:1", 2.0)
    assert "\n" not in str(info.value)
