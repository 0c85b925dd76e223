"""The chain behind one interface (`base.Chain`): bittensor 11 for real networks (`subtensor.py`), SQLite
offline (`offline.py`); `open_chain` picks one from the network flag."""

from __future__ import annotations

import os

from audionet.lib.core.chain.base import REAL_NETWORKS, Chain, Mechanisms, OwnWeights
from audionet.lib.core.chain.offline import OfflineChain
from audionet.lib.core.chain.subtensor import SubtensorChain
from audionet.lib.core.errors import ConfigError

__all__ = ["REAL_NETWORKS", "Chain", "Mechanisms", "OfflineChain", "OwnWeights", "SubtensorChain", "open_chain"]


def open_chain(network: str, netuid: int, wallet=None) -> Chain:
    """`offline:<sqlite path>` or a bittensor network name / ws(s):// URL."""
    if network.startswith("offline:"):
        path = network.removeprefix("offline:")
        if not os.path.exists(path):
            raise ConfigError(f"offline chain {path} does not exist (create it with audionet-localnet)")
        return OfflineChain(path, netuid, wallet)
    return SubtensorChain(network, netuid, wallet)
