"""What a chain is to the code above it: the real `bt.Metagraph`, the block, the subnet's incentive mechanisms,
weights per mechanism (set, and this wallet's read back) and a served endpoint.

A subnet runs one or more incentive mechanisms (bittensor 11: `mechanism_count`, `mechanism_emission_split`,
`set_weights(..., mechid=)`), each with its own weights and an owner-set share of the emission.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import bittensor as bt

from audionet.lib.core import yuma

REAL_NETWORKS = ("finney", "test", "local", "archive")


@dataclass(frozen=True)
class Mechanisms:
    count: int
    split: tuple[int, ...] = ()  # MechanismEmissionSplit: u16 shares summing to 65535; empty: even

    @property
    def shares(self) -> list[float]:
        """Each mechanism's share of the subnet's emission."""
        return [float(x) for x in yuma.split_shares(self.split, self.count)]


@dataclass(frozen=True)
class OwnWeights:
    """This wallet's weights on one mechanism as the chain holds them (bittensor's `weights` read: revealed, the
    row summing to 1; empty where none are revealed yet), the block it last set or committed weights there
    (subtensor's `LastUpdate`, which the activity cutoff and the rate limit count from) and whether it has a
    commit there that commit-reveal has not revealed yet (`TimelockedWeightCommits`): newer weights than
    `weights`, which nobody can read before the reveal (timelock-encrypted), and which a later setting would
    replace, being revealed after them."""

    weights: dict[int, float]
    block: int
    pending: bool


class Chain(ABC):
    netuid: int

    @abstractmethod
    async def metagraph(self) -> bt.Metagraph: ...

    @abstractmethod
    async def block(self) -> int: ...

    @abstractmethod
    async def mechanisms(self) -> Mechanisms:
        """How many incentive mechanisms the subnet runs and how its emission is split between them."""

    @abstractmethod
    async def set_weights(self, uids: Sequence[int], weights: Sequence[float], mechid: int = 0) -> None:
        """Publish this wallet's weights on mechanism `mechid`; raises on failure."""

    @abstractmethod
    async def own_weights(self, mechid: int = 0) -> Optional[OwnWeights]:
        """This wallet's weights on mechanism `mechid`, when it last set them and whether it has committed newer
        ones not revealed yet; None where it has neither weights nor a commit there."""

    @abstractmethod
    async def serve(self, ip: str, port: int) -> None:
        """Publish this wallet's hotkey endpoint."""

    async def close(self) -> None:
        return None
