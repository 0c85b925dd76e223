"""What a chain is to the code above it: the real `bt.Metagraph`, the block, the subnet's incentive mechanisms,
weights per mechanism and a served endpoint.

A subnet runs one or more incentive mechanisms (bittensor 11: `mechanism_count`, `mechanism_emission_split`,
`set_weights(..., mechid=)`), each with its own weights and an owner-set share of the emission.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

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
    async def serve(self, ip: str, port: int) -> None:
        """Publish this wallet's hotkey endpoint."""

    async def close(self) -> None:
        return None
