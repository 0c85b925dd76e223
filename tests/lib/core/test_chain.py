import asyncio
import subprocess
import sys
from dataclasses import replace

import pytest

from audionet.lib.core.chain import Mechanisms, OfflineChain, OwnWeights, open_chain
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.subnet_rules import DEVELOPMENT, RuleError, SubnetRules
from tests.files import REPO
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


def test_set_weights_stores_u16_like_the_sdk_and_needs_registration(tmp_path, wallets):
    path = str(tmp_path / "chain.sqlite")
    validator = wallets("v")
    chain = OfflineChain(path, wallet=validator, rules=DEVELOPMENT)  # weights on chain at once
    uid = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    asyncio.run(chain.set_weights([1, 2, 3], [1.0, 3.0, 1e-6]))
    # max-upscaled to 65535 and rounded, as bittensor sends them: a weight below 1/131070 of the top is dropped
    assert chain.weights(uid) == {1: 21845 / 87380, 2: 65535 / 87380}
    with pytest.raises(ValueError, match="all weights are zero"):
        asyncio.run(chain.set_weights([1], [0.0]))
    stranger = OfflineChain(path, wallet=wallets("s"))
    with pytest.raises(RuntimeError, match="not registered"):
        asyncio.run(stranger.set_weights([1], [1.0]))


def test_mechanisms_follow_the_chain(tmp_path, wallets):
    """One mechanism until the owner sets more; weights per mechanism; a count change drops the removed
    mechanisms' weights and resets the split to even, as subtensor's update_mechanism_counts_if_needed does."""
    path = str(tmp_path / "chain.sqlite")
    validator = wallets("v")
    chain = OfflineChain(path, wallet=validator, rules=replace(DEVELOPMENT, max_mechanisms=3, max_uids=85))
    me = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    for name in ("a", "b"):
        chain.register(name, "cold")
    assert asyncio.run(chain.mechanisms()) == Mechanisms(1) and Mechanisms(1).shares == [1.0]
    with pytest.raises(RuntimeError, match="MechanismDoesNotExist"):
        asyncio.run(chain.set_weights([1], [1.0], mechid=1))
    chain.set_mechanism_count(3)
    chain.set_emission_split([32768, 16384, 16383])
    assert asyncio.run(chain.mechanisms()).shares == pytest.approx([32768 / 65535, 16384 / 65535, 16383 / 65535])
    asyncio.run(chain.set_weights([1], [1.0], mechid=0))
    asyncio.run(chain.set_weights([2], [1.0], mechid=2))
    assert chain.weights(me, 0) == {1: 1.0} and chain.weights(me, 2) == {2: 1.0} and chain.weights(me, 1) == {}
    emission = chain.emission()
    assert emission[1] == pytest.approx(32768 / 65535) and emission[2] == pytest.approx(16383 / 65535)
    assert emission[me] == 0.0  # mechanism 1 set no weights: its share pays no miner
    for bad in ([65535, 0, 0, 0], [1, 2], []):
        with pytest.raises(ValueError, match="split"):
            chain.set_emission_split(bad)
    chain.set_mechanism_count(2)
    assert asyncio.run(chain.mechanisms()) == Mechanisms(2) and chain.weights(me, 2) == {}
    assert chain.weights(me, 0) == {1: 1.0}
    with pytest.raises(ValueError):
        chain.set_mechanism_count(0)


def test_the_offline_chain_refuses_the_layouts_subtensor_refuses(tmp_path):
    """A new subnet gets subtensor's defaults: MaxMechanismCount 2 and max_uids x mechanisms <= 256, so a
    256-uid subnet runs one mechanism; the owner lowers max_uids first, root raises MaxMechanismCount."""
    chain = OfflineChain(str(tmp_path / "chain.sqlite"))
    assert chain.rules == SubnetRules(
        tempo=360, weights_rate_limit=100, reveal_period=1, max_uids=256, max_mechanisms=2
    )
    with pytest.raises(RuleError, match="MaxMechanismCount is 2"):
        chain.set_mechanism_count(3)
    with pytest.raises(RuleError, match="TooManyUIDsPerMechanism: max_uids 256 x 2 .* to 128 or fewer"):
        chain.set_mechanism_count(2)
    chain.set_rules(max_uids=128)
    chain.set_mechanism_count(2)
    with pytest.raises(RuleError, match="TooManyUIDsPerMechanism"):
        chain.set_rules(max_uids=129)
    with pytest.raises(RuleError, match="1 to 16, not 17"):
        chain.set_rules(max_mechanisms=17)
    chain.set_rules(max_uids=85, max_mechanisms=3)
    chain.set_mechanism_count(3)
    assert asyncio.run(chain.mechanisms()).count == 3 and asyncio.run(chain.metagraph()).max_uids == 85
    small = OfflineChain(str(tmp_path / "small.sqlite"), rules=replace(DEVELOPMENT, max_uids=2))
    small.register("a", "cold")
    small.register("b", "cold")
    with pytest.raises(RuleError, match="full"):
        small.register("c", "cold")
    with pytest.raises(RuleError, match="CurrentUIds"):
        small.set_rules(max_uids=1)


def test_weights_wait_for_the_rate_limit_and_commit_reveal(tmp_path, wallets):
    """Committed weights stay hidden (and unpaid) until the epoch after the one they were committed in; a
    validator sets weights on a mechanism once per rate limit."""
    validator = wallets("v")
    rules = SubnetRules(tempo=9, weights_rate_limit=4, reveal_period=1)
    chain = OfflineChain(str(tmp_path / "chain.sqlite"), wallet=validator, block_seconds=0.1, rules=rules)
    me = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    miner = chain.register("miner", "cold")
    asyncio.run(chain.set_weights([miner], [1.0]))
    committed = asyncio.run(chain.block())
    with pytest.raises(RuntimeError, match="SettingWeightsTooFast"):
        asyncio.run(chain.set_weights([miner], [1.0]))  # 4 blocks are 0.4 s: this comes sooner
    seen, now = chain.weights(me), asyncio.run(chain.block())
    if not rules.revealed(committed, now, chain.netuid):
        assert seen == {} and chain.emission()[miner] == 0.0 and chain.pending() == 1
    wait_until(lambda: chain.weights(me) == {miner: 1.0}, timeout_s=10, what="the reveal at the next epoch")
    assert rules.epoch(asyncio.run(chain.block()), chain.netuid) > rules.epoch(committed, chain.netuid)
    assert chain.emission()[miner] == pytest.approx(1.0) and chain.pending() == 0
    wait_until(lambda: asyncio.run(chain.block()) >= committed + 5, timeout_s=10, what="the rate limit's 4 blocks")
    asyncio.run(chain.set_weights([miner], [1.0]))


def test_the_offline_chain_script_says_what_it_refuses_in_one_line(tmp_path):
    """On a chain with no neurons too (it used to end in a traceback from an empty consensus)."""
    script = [sys.executable, "scripts/offline_chain.py", "--chain", str(tmp_path / "new.sqlite")]
    refused = subprocess.run([*script, "mechanisms", "--count", "3"], capture_output=True, text=True, cwd=REPO)
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0
    assert refused.stderr.startswith("error: InvalidValue: MaxMechanismCount is 2"), refused.stderr
    shown = subprocess.run([*script, "mechanisms", "--count", "1"], capture_output=True, text=True, cwd=REPO)
    assert shown.returncode == 0 and "0 neurons" in shown.stdout and "commit-reveal 1 tempo" in shown.stdout


def test_open_chain_refuses_a_missing_offline_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        open_chain(f"offline:{tmp_path / 'missing.sqlite'}", 1)


class RecordingClient:
    """Stands in for bittensor's async Client (the one thing that needs a live chain):
    the same method names and return types, answering from memory."""

    def __init__(self, metagraph, succeed=True, uids=None, weights=None, last_update=None, commits=None):
        from types import SimpleNamespace

        self.executed, self.succeed, self.queried = [], succeed, []
        self.subnets = self
        self._metagraph = metagraph
        self._uids, self._weights, self._last_update = uids or {}, weights or {}, last_update or {}
        self._commits = commits or {}
        self.neurons = SimpleNamespace(uid=self._uid)
        self.weights = SimpleNamespace(weights=self._weight_rows, timelocked_weight_commits=self._timelocked)

    async def _uid(self, hotkey_ss58, netuid, *, block=None):
        return self._uids.get(hotkey_ss58)

    async def _weight_rows(self, netuid, mechid=0, *, block=None):
        return self._weights.get(mechid, {})

    async def _timelocked(self, netuid, mechid=0, *, block=None):
        return self._commits.get(mechid, {})

    async def query(self, item, params=None, *, block=None):
        self.queried.append((item, params))
        return self._last_update.get(tuple(params)) if item.name == "LastUpdate" else None

    async def mechanism_count(self, netuid, *, block=None):
        return 3

    async def mechanism_emission_split(self, netuid, *, block=None):
        return [21845, 21845, 21845]

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
    assert asyncio.run(chain.mechanisms()) == Mechanisms(3, (21845, 21845, 21845))
    asyncio.run(chain.set_weights([3, 5], [0.25, 0.75], mechid=2))
    asyncio.run(chain.serve("203.0.113.7", 8091))
    (weights, signer), (serve, _) = chain._client.executed
    expected = bt.SetWeights(netuid=16, uids=[3, 5], weights=[0.25, 0.75], mechid=2, version_key=7)
    assert weights == expected and signer is wallet
    assert serve == bt.ServeAxon(netuid=16, ip="203.0.113.7", port=8091)
    chain._client.succeed = False
    with pytest.raises(bt.ChainError, match="rate limited"):
        asyncio.run(chain.set_weights([3], [1.0]))
    chain.netuid = 99
    with pytest.raises(RuntimeError, match="does not exist"):
        asyncio.run(chain.metagraph())


def test_subtensor_chain_reads_its_own_weights_and_last_update_per_mechanism(tmp_path, wallets):
    """bittensor 11: the `weights` read (rows summing to 1, by validator uid), `LastUpdate` and the timelocked
    commits not revealed yet (by epoch, each naming its hotkey), all kept under the mechanism's storage index
    (mechid x 4096 + netuid)."""
    import bittensor as bt

    from audionet.lib.core.chain import SubtensorChain

    wallet = wallets("v")
    chain = SubtensorChain("finney", 16, wallet)
    rows = {2: {0: {7: 1.0}, 1: {3: 0.25, 5: 0.75}}}
    mine = {"hotkey": wallet.hotkey.ss58_address, "commit_block": 1300, "reveal_round": 9, "ciphertext": "0x00"}
    others = {"hotkey": wallets("other").hotkey.ss58_address, "commit_block": 1290, "reveal_round": 9}
    chain._client = RecordingClient(
        None,
        uids={wallet.hotkey.ss58_address: 1},
        weights=rows,
        last_update={(2 * 4096 + 16,): [900, 1200], (4096 + 16,): [0, 1300]},
        commits={0: {4: [others]}, 1: {4: [others, mine]}},
    )
    assert asyncio.run(chain.own_weights(2)) == OwnWeights({3: 0.25, 5: 0.75}, 1200, pending=False)
    assert chain._client.queried == [(bt.storage.SubtensorModule.LastUpdate, [2 * 4096 + 16])]
    assert asyncio.run(chain.own_weights(0)) is None  # no row of its own on mechanism 0, nor a commit
    assert asyncio.run(chain.own_weights(1)) == OwnWeights({}, 1300, pending=True)  # committed, none revealed
    chain.wallet = wallets("stranger")
    assert asyncio.run(chain.own_weights(2)) is None  # not registered


def test_the_offline_chain_reads_back_revealed_weights_and_the_block_of_the_last_commit(tmp_path, wallets):
    """As subtensor: the `weights` read shows revealed weights only, while LastUpdate moves at the commit."""
    validator = wallets("v")
    rules = SubnetRules(tempo=9, weights_rate_limit=0, reveal_period=1)
    chain = OfflineChain(str(tmp_path / "chain.sqlite"), wallet=validator, block_seconds=0.1, rules=rules)
    me = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    a, b = chain.register("a", "cold"), chain.register("b", "cold")
    assert asyncio.run(chain.own_weights(0)) is None
    asyncio.run(chain.set_weights([a], [1.0]))
    first, own = asyncio.run(chain.block()), asyncio.run(chain.own_weights(0))
    if not rules.revealed(first, asyncio.run(chain.block()), chain.netuid):
        assert own == OwnWeights({}, own.block, pending=True) and own.block <= first  # committed, none revealed
    wait_until(lambda: asyncio.run(chain.own_weights(0)).weights, timeout_s=10, what="the reveal")
    assert asyncio.run(chain.own_weights(0)).weights == {a: 1.0} == chain.weights(me)
    asyncio.run(chain.set_weights([b], [1.0]))
    committed = asyncio.run(chain.block())
    own = asyncio.run(chain.own_weights(0))
    assert first < own.block <= committed  # the commit is its last update (revealed a reveal period later)
    if not rules.revealed(committed, asyncio.run(chain.block()), chain.netuid):
        assert own.weights == {a: 1.0} and own.pending  # hidden until then
    wait_until(lambda: asyncio.run(chain.own_weights(0)).weights == {b: 1.0}, timeout_s=10, what="the reveal")
    assert asyncio.run(chain.own_weights(0)) == OwnWeights({b: 1.0}, own.block, pending=False)
    assert asyncio.run(OfflineChain(chain.path, wallet=wallets("s")).own_weights(0)) is None


def test_the_offline_metagraph_reports_each_uids_last_update_on_mechanism_0(tmp_path, wallets):
    """As subtensor's `LastUpdate` under the mechanism's index: the block a uid last set or committed weights
    there (the commit, not its reveal), else the block it registered at; not the metagraph's block."""
    validator, other = wallets("v"), wallets("w")
    rules = replace(DEVELOPMENT, tempo=9, reveal_period=1, max_uids=128)
    chain = OfflineChain(str(tmp_path / "chain.sqlite"), wallet=validator, block_seconds=0.05, rules=rules)
    chain.set_mechanism_count(2)
    me = chain.register(validator.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    them = chain.register(other.hotkey.ss58_address, "cold", stake=1.0, validator_permit=True)
    miner = chain.register("miner", "cold")
    joined = asyncio.run(chain.metagraph())
    wait_until(lambda: asyncio.run(chain.block()) > joined.block + 2, timeout_s=10, what="two blocks")
    asyncio.run(chain.set_weights([miner], [1.0]))  # committed on mechanism 0
    asyncio.run(OfflineChain(chain.path, wallet=other).set_weights([miner], [1.0], mechid=1))  # mechanism 1 only
    committed = asyncio.run(chain.own_weights(0)).block
    wait_until(lambda: chain.pending() == 0, timeout_s=10, what="the reveal")
    metagraph = asyncio.run(chain.metagraph())
    assert metagraph.block > committed > max(n.block_at_registration for n in joined.neurons)
    assert metagraph.neuron(me).last_update == committed
    for uid in (them, miner):
        assert metagraph.neuron(uid).last_update == joined.neuron(uid).block_at_registration
