"""The offline chain's metagraph: the real `bt.Metagraph` dataclass, built from its SQLite rows."""

from __future__ import annotations

import bittensor as bt

from audionet.lib.core.subnet_rules import SubnetRules


def _neuron(uid, hotkey, coldkey, stake, permit, ip, port, registered, last_update) -> bt.MetagraphNeuron:
    balance = bt.Balance.from_tao(stake)
    zero = bt.Balance.from_tao(0)
    return bt.MetagraphNeuron(
        uid=uid,
        hotkey=hotkey,
        coldkey=coldkey,
        active=True,
        validator_permit=bool(permit),
        last_update=last_update,
        block_at_registration=registered,
        rank=0.0,
        trust=0.0,
        consensus=0.0,
        incentive=0.0,
        dividends=0.0,
        pruning_score=0.0,
        emission=zero,
        alpha_stake=balance,
        tao_stake=zero,
        total_stake=balance,
        axon=f"{ip}:{port}" if ip else None,
        identity=None,
        commitment=None,
    )


def metagraph_of(netuid: int, block: int, rules: SubnetRules, rows: list, last_update: dict[int, int]) -> bt.Metagraph:
    """`rows`: (uid, hotkey, coldkey, stake, validator_permit, ip, port, registered) per neuron, by uid;
    `last_update`: each uid's `LastUpdate` on mechanism 0, the block it last set or committed weights there (its
    registration block where it never has)."""
    neurons = [_neuron(*row, last_update[row[0]]) for row in rows]
    return bt.Metagraph(
        netuid=netuid,
        mechid=0,
        name="audionet-offline",
        symbol="α",
        block=block,
        tempo=rules.tempo,
        last_step=0,
        blocks_since_last_step=block,
        owner_hotkey="",
        owner_coldkey="",
        network_registered_at=0,
        num_uids=len(neurons),
        max_uids=rules.max_uids,
        price=None,
        moving_price=None,
        identity=None,
        neurons=neurons,
        commitments={},
        unregistered_commitments={},
        raw={},
    )
