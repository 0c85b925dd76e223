import asyncio
import subprocess
import sys

import pytest

from audionet.lib.core.chain import OfflineChain, open_chain
from audionet.lib.core.errors import ConfigError
from tests.gated import wait_until


def test_offline_chain_is_shared_between_processes_and_returns_real_metagraph(tmp_path, wallets):
    path = str(tmp_path / "chain.sqlite")
    chain = OfflineChain(path, netuid=3, block_seconds=0.05)
    validator = wallets("v")
    chain.register(validator.hotkey.ss58_address, "cold", stake=500.0, validator_permit=True)
    # Another process registers a miner and publishes its endpoint.
    code = (
        "import asyncio, sys; from audionet.lib.core.chain import OfflineChain; from audionet.lib.core.wallet import create_wallet;"
        f"w = create_wallet('m', 'default', {str(tmp_path / 'wallets')!r});"
        f"c = OfflineChain({path!r}, 3, w); c.register(w.hotkey.ss58_address, 'cold2');"
        "asyncio.run(c.serve('127.0.0.1', 9999))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    metagraph = asyncio.run(chain.metagraph())
    assert len(metagraph) == 2 and metagraph.netuid == 3
    miner = metagraph.neuron(1)
    assert miner.axon == "127.0.0.1:9999" and not miner.validator_permit
    assert metagraph.neuron(0).total_stake.tao == 500.0 and metagraph.neuron(0).validator_permit

    first = asyncio.run(chain.block())
    wait_until(lambda: asyncio.run(chain.block()) > first, timeout_s=5, what="the next block (0.05 s)")


def test_set_weights_normalises_and_needs_registration(tmp_path, wallets):
    path = str(tmp_path / "chain.sqlite")
    validator = wallets("v")
    chain = OfflineChain(path, wallet=validator)
    uid = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    asyncio.run(chain.set_weights([1, 2], [1.0, 3.0]))
    assert chain.weights(uid) == {1: 0.25, 2: 0.75}
    stranger = OfflineChain(path, wallet=wallets("s"))
    with pytest.raises(RuntimeError, match="not registered"):
        asyncio.run(stranger.set_weights([1], [1.0]))


def test_open_chain_refuses_a_missing_offline_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        open_chain(f"offline:{tmp_path / 'missing.sqlite'}", 1)


class RecordingClient:
    """Stands in for bittensor's async Client (the one thing that needs a live chain):
    the same method names and return types, answering from memory."""

    def __init__(self, metagraph, succeed=True):
        self.executed, self.succeed = [], succeed
        self.subnets = self
        self._metagraph = metagraph

    async def metagraph(self, netuid, block=None, *, commitments=True):
        return self._metagraph if netuid == self._metagraph.netuid else None

    async def block(self):
        return 1234

    async def execute(self, intent, wallet):
        from bittensor.result import ExtrinsicResult

        self.executed.append((intent, wallet))
        return ExtrinsicResult(success=self.succeed, message="" if self.succeed else "rate limited")

    async def close(self):
        pass


def test_subtensor_chain_sends_real_intents(tmp_path, wallets):
    import bittensor as bt

    from audionet.lib.core.chain import SubtensorChain

    offline = OfflineChain(str(tmp_path / "c.sqlite"), netuid=16)
    wallet = wallets("v")
    chain = SubtensorChain("finney", 16, wallet, version_key=7)
    chain._client = RecordingClient(asyncio.run(offline.metagraph()))
    assert asyncio.run(chain.block()) == 1234
    assert asyncio.run(chain.metagraph()).netuid == 16
    asyncio.run(chain.set_weights([3, 5], [0.25, 0.75]))
    asyncio.run(chain.serve("203.0.113.7", 8091))
    (weights, signer), (serve, _) = chain._client.executed
    assert weights == bt.SetWeights(netuid=16, uids=[3, 5], weights=[0.25, 0.75], version_key=7) and signer is wallet
    assert serve == bt.ServeAxon(netuid=16, ip="203.0.113.7", port=8091)
    chain._client.succeed = False
    with pytest.raises(bt.ChainError, match="rate limited"):
        asyncio.run(chain.set_weights([3], [1.0]))
    chain.netuid = 99
    with pytest.raises(RuntimeError, match="does not exist"):
        asyncio.run(chain.metagraph())
