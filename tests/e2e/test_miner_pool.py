"""Real miner processes on loopback with a device pool: two replicas on this CPU with their own
parallel counts (local), and two CPU replicas as Ray actors on a local Ray cluster this test starts
and stops; the signed HTTP front is the same either way."""

import asyncio
import json

import bittensor as bt
import httpx
import pytest

from audionet.lib.core.auth import sign_request, verify_response
from audionet.lib.core.protocol import unpack_response
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import LocalNet
from audionet.lib.validator.client import miner_health

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    net = LocalNet(str(tmp_path_factory.mktemp("miner-pool")))
    net.add_validator()
    try:
        yield net
    finally:
        net.stop()


def burst(net, miner, count: int) -> list[httpx.Response]:
    validator = create_wallet("validator", "default", net.wallets)

    async def run():
        async with httpx.AsyncClient(timeout=120) as client:

            async def one(index):
                body = json.dumps({"text": f"Pooled request number {index}.", "seed": index}).encode()
                headers = sign_request(validator, "/v1/tts", body, miner.hotkey)
                response = await client.post(f"http://127.0.0.1:{miner.port}/v1/tts", content=body, headers=headers)
                assert response.status_code == 200, response.text
                verify_response(
                    response.headers,
                    response.content,
                    "/v1/tts",
                    miner_hotkey=miner.hotkey,
                    self_hotkey=validator.hotkey.ss58_address,
                    nonce_store=bt.http_auth.InMemoryNonceStore(),
                )
                return response

            return await asyncio.gather(*(one(i) for i in range(count)))

    return asyncio.run(run())


def health(net, miner) -> dict:
    validator = create_wallet("validator", "default", net.wallets)
    return miner_health(f"http://127.0.0.1:{miner.port}", validator, miner.hotkey)


def test_two_replicas_with_their_own_parallel_counts_serve_one_burst(net):
    miner = net.add_miner(
        "pooled", extra_args=("--services", "tts", "--pool.devices", "cpu,cpu", "--pool.parallel", "2,1")
    )
    net.wait_ready()
    answers = burst(net, miner, 6)
    state = health(net, miner)
    replicas = state["services"]["tts"]["replicas"]
    assert [r["parallel"] for r in replicas] == [2, 1]
    assert sum(r["served"] for r in replicas) == 6 and state["services"]["tts"]["served"] == 6
    assert {unpack_response(a.content)[0].device for a in answers} == {replicas[0]["label"].rsplit("-r", 1)[0]}
    assert set(state["devices"]) == {r["label"] for r in replicas}
    assert all(row["busy"] == 0 and row["waiting"] == 0 for row in state["devices"].values())


def test_parallel_counts_that_do_not_match_the_devices_stop_the_miner_with_one_line(net):
    miner = net.add_miner("miscounted", extra_args=("--pool.devices", "cpu,cpu", "--pool.parallel", "1,2,3"))
    assert miner.process.wait(120) == 2
    with open(miner.log_path) as handle:
        assert "--pool.parallel gives 3 counts for 2 devices" in handle.read().strip().splitlines()[-1]
    net.miners.remove(miner)


def test_ray_actors_as_replicas_behind_the_same_signed_front(net):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 1024**2, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        miner = net.add_miner(
            "ray",
            extra_args=(
                "--services",
                "tts",
                "--pool.backend",
                "ray",
                "--ray.address",
                address,
                "--pool.devices",
                "cpu,cpu",
            ),
        )
        net.wait_ready(timeout=180)
        answers = burst(net, miner, 8)  # deep enough that the second replica pays even if a little slower
        replicas = health(net, miner)["services"]["tts"]["replicas"]
        assert len(replicas) == 2 and all(r["served"] >= 1 for r in replicas), replicas
        assert sum(r["served"] for r in replicas) == 8
        assert all(unpack_response(a.content)[0].device.startswith("cpu-") for a in answers)
        assert all("@" in r["device"] for r in replicas)  # device@node: the actor's own host
    finally:
        for miner in [m for m in net.miners if m.name == "ray"]:
            from audionet.lib.localnet import stop_process

            stop_process(miner.process)
        ray.shutdown()
