"""A real network (finney, test, a local subtensor, a ws(s):// URL) through bittensor 11's async client."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Optional

import bittensor as bt
from bittensor.settings import GLOBAL_MAX_SUBNET_COUNT

from audionet.lib.core.chain.base import Chain, Mechanisms, OwnWeights


class SubtensorChain(Chain):
    """A real network through bittensor 11's async client (connected lazily, once)."""

    def __init__(self, network: str, netuid: int, wallet=None, version_key: int = 0):
        self.network, self.netuid, self.wallet, self.version_key = network, int(netuid), wallet, version_key
        self._client: Optional[bt.Client] = None
        self._lock = asyncio.Lock()

    async def _connected(self) -> bt.Client:
        async with self._lock:
            if self._client is None:
                self._client = await bt.Subtensor(self.network)
            return self._client

    async def metagraph(self) -> bt.Metagraph:
        client = await self._connected()
        metagraph = await client.subnets.metagraph(self.netuid, commitments=False)
        if metagraph is None:
            raise RuntimeError(f"subnet {self.netuid} does not exist on {self.network}")
        return metagraph

    async def block(self) -> int:
        return await (await self._connected()).block()

    async def mechanisms(self) -> Mechanisms:
        client = await self._connected()
        count = await client.subnets.mechanism_count(self.netuid)
        split = await client.subnets.mechanism_emission_split(self.netuid)
        return Mechanisms(max(1, int(count)), tuple(int(x) for x in split))

    async def set_weights(self, uids: Sequence[int], weights: Sequence[float], mechid: int = 0) -> None:
        client = await self._connected()
        intent = bt.SetWeights(
            netuid=self.netuid,
            uids=[int(u) for u in uids],
            weights=[float(w) for w in weights],
            mechid=int(mechid),
            version_key=self.version_key,
        )
        (await client.execute(intent, self.wallet)).raise_for_failure()

    async def own_weights(self, mechid: int = 0) -> Optional[OwnWeights]:
        client = await self._connected()
        hotkey = self.wallet.hotkey.ss58_address
        uid = await client.neurons.uid(hotkey, self.netuid)
        if uid is None:
            return None
        row = (await client.weights.weights(self.netuid, mechid=int(mechid))).get(int(uid)) or {}
        commits = await client.weights.timelocked_weight_commits(self.netuid, mechid=int(mechid))
        pending = any(c["hotkey"] == hotkey for epoch in commits.values() for c in epoch)
        if not row and not pending:
            return None
        # LastUpdate is kept per mechanism under its storage index, as the weights are (bittensor's preflight)
        index = int(mechid) * GLOBAL_MAX_SUBNET_COUNT + self.netuid
        last = await client.query(bt.storage.SubtensorModule.LastUpdate, [index])
        block = int(last[uid]) if isinstance(last, (list, tuple)) and uid < len(last) else 0
        return OwnWeights(dict(row), block, pending)

    async def serve(self, ip: str, port: int) -> None:
        client = await self._connected()
        (await client.execute(bt.ServeAxon(netuid=self.netuid, ip=ip, port=int(port)), self.wallet)).raise_for_failure()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
