"""Weight setting on the offline chain: a validator holding a mechanism (a lost state, a service it begins to
score) sets the weights it has on chain there again an epoch after they were set, so its stake keeps counting
within subtensor's activity cutoff; a fresh validator has nothing to hold; evidence that is ready is published."""

import asyncio
from dataclasses import replace

import numpy as np
import pytest

from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.subnet_rules import DEVELOPMENT
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.settings import ValidatorSettings
from audionet.lib.validator.state import ScoreState
from audionet.lib.validator.weight_setting import WeightSetter
from tests.gated import wait_until

MINERS = 32
EPOCH = 20  # blocks of 0.05 s: an epoch is a second


def subnet(tmp_path, wallets, rules=DEVELOPMENT):
    """A validator (uid 0) and MINERS miners on an offline chain whose blocks pass every 0.05 s."""
    validator = wallets("v")
    chain = OfflineChain(str(tmp_path / "chain.sqlite"), wallet=validator, block_seconds=0.05, rules=rules)
    me = chain.register(validator.hotkey.ss58_address, "cold", stake=100.0, validator_permit=True)
    hotkeys = [f"miner-{uid}" for uid in range(1, MINERS + 1)]
    miners = [chain.register(hotkey, "cold") for hotkey in hotkeys]
    return chain, me, ["v", *hotkeys], miners


def setter(tmp_path, chain, state: ScoreState) -> WeightSetter:
    settings = ValidatorSettings(state_dir=str(tmp_path), services=("tts",), epoch_length=EPOCH)
    return WeightSetter(chain, settings, state, str(tmp_path / "state.json"))


def ready_state(hotkeys: list[str]) -> ScoreState:
    """Records of every miner good enough to publish (the typical error within `ready_error`)."""
    state, rng = ScoreState(("tts",), hotkeys=hotkeys), np.random.default_rng(0)
    means = rng.uniform(0.3, 0.9, len(hotkeys))
    while state.typical_errors()["tts"] > CURVE.ready_error:
        for uid in range(1, len(hotkeys)):
            state.update("tts", uid, float(np.clip(means[uid] + 0.2 * rng.standard_normal(), 0, 1)))
    return state


def blocks_after(chain: OfflineChain, block: int) -> int:
    wait_until(lambda: asyncio.run(chain.block()) >= block, timeout_s=30, what=f"block {block}")
    return asyncio.run(chain.block())


def test_a_validator_that_lost_its_state_sets_its_own_weights_on_chain_again_each_epoch_while_it_holds(
    tmp_path, wallets
):
    chain, me, hotkeys, miners = subnet(tmp_path, wallets)
    asyncio.run(chain.set_weights(miners[:3], [0.5, 0.3, 0.2]))  # what it set before its disk was lost
    on_chain = asyncio.run(chain.own_weights(0))
    assert on_chain is not None and on_chain.weights == chain.weights(me)
    lost = setter(tmp_path, chain, ScoreState(("tts",), hotkeys=hotkeys))  # no records: it holds
    assert lost.state.typical_errors()["tts"] > CURVE.ready_error

    asyncio.run(lost.set(on_chain.block + 1))  # set a block ago: nothing to set again yet
    assert asyncio.run(chain.own_weights(0)) == on_chain and lost.state.mechanism_blocks == {0: on_chain.block}

    for _ in range(2):  # an epoch after they were set, the same weights again: LastUpdate moves on
        previous = asyncio.run(chain.own_weights(0))
        block = blocks_after(chain, previous.block + EPOCH)
        asyncio.run(lost.set(block))
        again = asyncio.run(chain.own_weights(0))
        assert again.weights == on_chain.weights and previous.block + EPOCH <= again.block <= block + 1
        assert lost.state.mechanism_blocks[0] == block
        assert ScoreState.load(str(tmp_path / "state.json"), ("tts",)).mechanism_blocks == {0: block}
        asyncio.run(lost.set(block + 1))  # within the epoch: not again
        assert asyncio.run(chain.own_weights(0)) == again


def test_a_held_setting_the_rate_limit_refuses_is_tried_again_next_round(tmp_path, wallets):
    chain, me, hotkeys, miners = subnet(tmp_path, wallets, replace(DEVELOPMENT, weights_rate_limit=2 * EPOCH))
    asyncio.run(chain.set_weights(miners[:2], [0.6, 0.4]))
    on_chain = asyncio.run(chain.own_weights(0))
    lost = setter(tmp_path, chain, ScoreState(("tts",), hotkeys=hotkeys))
    block = blocks_after(chain, on_chain.block + EPOCH)
    asyncio.run(lost.set(block))  # the chain refuses it: within its rate limit
    assert asyncio.run(chain.own_weights(0)) == on_chain and 0 not in lost.state.mechanism_blocks
    block = blocks_after(chain, on_chain.block + 2 * EPOCH)
    asyncio.run(lost.set(block))  # the next round, not an epoch later
    again = asyncio.run(chain.own_weights(0))
    assert again.weights == on_chain.weights and again.block >= on_chain.block + 2 * EPOCH


def test_a_fresh_validator_holds_nothing_and_sets_nothing(tmp_path, wallets):
    chain, me, hotkeys, _ = subnet(tmp_path, wallets)
    fresh = setter(tmp_path, chain, ScoreState(("tts",), hotkeys=hotkeys))
    for block in (blocks_after(chain, 1), blocks_after(chain, EPOCH + 1)):
        asyncio.run(fresh.set(block))
    assert asyncio.run(chain.own_weights(0)) is None and chain.weights(me) == {}
    assert fresh.state.mechanism_blocks == {} and fresh.state.last_weights_block == -1


def test_once_its_evidence_is_ready_it_publishes_its_own_weights_instead(tmp_path, wallets):
    chain, me, hotkeys, miners = subnet(tmp_path, wallets)
    asyncio.run(chain.set_weights(miners[:3], [0.5, 0.3, 0.2]))
    held = asyncio.run(chain.own_weights(0))
    ready = setter(tmp_path, chain, ready_state(hotkeys))
    own = np.asarray(ready.state.weights()["tts"])
    asyncio.run(ready.set(blocks_after(chain, 1)))  # its own are due at once (nothing recorded), held or not
    published = asyncio.run(chain.own_weights(0))
    assert published.weights != held.weights and set(published.weights) == set(np.flatnonzero(own > 0).tolist())
    top = int(np.argmax(own))
    assert max(published.weights, key=published.weights.get) == top


def test_a_holding_validator_never_replaces_newer_weights_it_committed_that_are_not_revealed_yet(tmp_path, wallets):
    """Commit-reveal: weights it committed before losing its state reveal an epoch later, and the `weights`
    read shows the older ones until then; setting those again would be revealed after, and replace, the newer.
    It sets nothing while its commit is pending, and holds the newer weights once they are revealed."""
    chain, me, hotkeys, miners = subnet(tmp_path, wallets, replace(DEVELOPMENT, tempo=4 * EPOCH))
    asyncio.run(chain.set_weights(miners[:2], [0.6, 0.4]))  # set before the owner turns commit-reveal on
    rules = chain.set_rules(reveal_period=1)  # a commit is revealed at the next epoch: up to 4 s later
    at_start = lambda: (asyncio.run(chain.block()) + chain.netuid + 1) % (rules.tempo + 1) < 5  # noqa: E731
    wait_until(at_start, timeout_s=30, what="the start of an epoch")
    asyncio.run(chain.set_weights(miners[2:5], [0.5, 0.3, 0.2]))  # newer, committed: revealed an epoch later
    newer = {miners[2]: 0.5, miners[3]: 0.3, miners[4]: 0.2}
    committed = asyncio.run(chain.own_weights(0))
    assert committed.pending and committed.weights == pytest.approx({miners[0]: 0.6, miners[1]: 0.4}, abs=1e-4)

    lost = setter(tmp_path, chain, ScoreState(("tts",), hotkeys=hotkeys))  # no records: it holds
    block = blocks_after(chain, committed.block + EPOCH)  # its last update is an epoch old
    asyncio.run(lost.set(block))
    assert not rules.revealed(committed.block, asyncio.run(chain.block()), chain.netuid)  # set before the reveal
    assert chain.pending() == 1 and 0 not in lost.state.mechanism_blocks  # nothing set: the commit stays the last

    wait_until(lambda: chain.pending() == 0, timeout_s=30, what="the newer weights' reveal")
    revealed = asyncio.run(chain.own_weights(0))
    assert revealed.weights == pytest.approx(newer, abs=1e-4) and revealed.block == committed.block
    block = blocks_after(chain, block + EPOCH)  # looked again an epoch later: the newer weights are held now
    asyncio.run(lost.set(block))
    again = asyncio.run(chain.own_weights(0))
    assert again.pending and again.block > committed.block and lost.state.mechanism_blocks == {0: block}
