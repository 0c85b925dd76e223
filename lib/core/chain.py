"""The chain behind one interface: bittensor 11 for real networks, SQLite offline.

Both implementations hand out the real `bt.Metagraph` dataclass, so code above
this layer cannot tell which chain it talks to. The offline chain is a file
that several processes share (WAL mode): miners register and publish their
endpoint, the validator reads them and writes weights, and the block height
advances with wall-clock time.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import closing
from typing import Optional

import bittensor as bt

from audionet.lib.core.errors import ConfigError

REAL_NETWORKS = ("finney", "test", "local", "archive")


class Chain(ABC):
    netuid: int

    @abstractmethod
    async def metagraph(self) -> bt.Metagraph: ...

    @abstractmethod
    async def block(self) -> int: ...

    @abstractmethod
    async def set_weights(self, uids: Sequence[int], weights: Sequence[float]) -> None:
        """Publish this wallet's weights; raises on failure."""

    @abstractmethod
    async def serve(self, ip: str, port: int) -> None:
        """Publish this wallet's hotkey endpoint."""

    async def close(self) -> None:
        return None


def _neuron(uid, hotkey, coldkey, stake, permit, ip, port, registered, block) -> bt.MetagraphNeuron:
    balance = bt.Balance.from_tao(stake)
    zero = bt.Balance.from_tao(0)
    return bt.MetagraphNeuron(
        uid=uid,
        hotkey=hotkey,
        coldkey=coldkey,
        active=True,
        validator_permit=bool(permit),
        last_update=block,
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


class OfflineChain(Chain):
    """A local subnet in one SQLite file; no network, no tokens."""

    def __init__(self, path: str, netuid: int = 1, wallet=None, block_seconds: float = 12.0):
        self.path, self.netuid, self.wallet = str(path), int(netuid), wallet
        with closing(self._connect()) as db, db:
            db.executescript(
                """
                CREATE TABLE IF NOT EXISTS subnet(netuid INTEGER PRIMARY KEY, genesis REAL, block_seconds REAL);
                CREATE TABLE IF NOT EXISTS neurons(netuid INTEGER, uid INTEGER, hotkey TEXT, coldkey TEXT,
                    stake REAL, validator_permit INTEGER, ip TEXT, port INTEGER, registered INTEGER,
                    PRIMARY KEY(netuid, uid), UNIQUE(netuid, hotkey));
                CREATE TABLE IF NOT EXISTS weights(netuid INTEGER, validator_uid INTEGER, uid INTEGER,
                    weight REAL, block INTEGER, PRIMARY KEY(netuid, validator_uid, uid));
                """
            )
            db.execute("INSERT OR IGNORE INTO subnet VALUES (?, ?, ?)", (self.netuid, time.time(), block_seconds))

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def _block_now(self, db: sqlite3.Connection) -> int:
        genesis, seconds = db.execute(
            "SELECT genesis, block_seconds FROM subnet WHERE netuid=?", (self.netuid,)
        ).fetchone()
        return int((time.time() - genesis) / seconds)

    # --- offline-only administration (what btcli does on a real chain) ---
    def register(self, hotkey: str, coldkey: str, *, stake: float = 0.0, validator_permit: bool = False) -> int:
        """Register `hotkey` (idempotent) and return its uid."""
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            row = db.execute("SELECT uid FROM neurons WHERE netuid=? AND hotkey=?", (self.netuid, hotkey)).fetchone()
            if row:
                db.execute(
                    "UPDATE neurons SET stake=?, validator_permit=? WHERE netuid=? AND uid=?",
                    (stake, int(validator_permit), self.netuid, row[0]),
                )
                return row[0]
            uid = db.execute("SELECT COUNT(*) FROM neurons WHERE netuid=?", (self.netuid,)).fetchone()[0]
            db.execute(
                "INSERT INTO neurons VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
                (self.netuid, uid, hotkey, coldkey, stake, int(validator_permit), self._block_now(db)),
            )
            return uid

    def weights(self, validator_uid: int) -> dict[int, float]:
        with closing(self._connect()) as db:
            rows = db.execute(
                "SELECT uid, weight FROM weights WHERE netuid=? AND validator_uid=? ORDER BY uid",
                (self.netuid, validator_uid),
            ).fetchall()
        return dict(rows)

    # --- the Chain interface ---
    async def metagraph(self) -> bt.Metagraph:
        with closing(self._connect()) as db:
            block = self._block_now(db)
            rows = db.execute(
                "SELECT uid, hotkey, coldkey, stake, validator_permit, ip, port, registered "
                "FROM neurons WHERE netuid=? ORDER BY uid",
                (self.netuid,),
            ).fetchall()
        neurons = [_neuron(*row, block) for row in rows]
        return bt.Metagraph(
            netuid=self.netuid,
            mechid=0,
            name="audionet-offline",
            symbol="α",
            block=block,
            tempo=360,
            last_step=0,
            blocks_since_last_step=block,
            owner_hotkey="",
            owner_coldkey="",
            network_registered_at=0,
            num_uids=len(neurons),
            max_uids=256,
            price=None,
            moving_price=None,
            identity=None,
            neurons=neurons,
            commitments={},
            unregistered_commitments={},
            raw={},
        )

    async def block(self) -> int:
        with closing(self._connect()) as db:
            return self._block_now(db)

    def _own_uid(self, db: sqlite3.Connection) -> int:
        hotkey = self.wallet.hotkey.ss58_address
        row = db.execute("SELECT uid FROM neurons WHERE netuid=? AND hotkey=?", (self.netuid, hotkey)).fetchone()
        if row is None:
            raise RuntimeError(f"hotkey {hotkey} is not registered on offline netuid {self.netuid}")
        return row[0]

    async def set_weights(self, uids: Sequence[int], weights: Sequence[float]) -> None:
        total = float(sum(weights))
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            me = self._own_uid(db)
            block = self._block_now(db)
            db.execute("DELETE FROM weights WHERE netuid=? AND validator_uid=?", (self.netuid, me))
            db.executemany(
                "INSERT INTO weights VALUES (?, ?, ?, ?, ?)",
                [
                    (self.netuid, me, int(u), float(w) / total if total > 0 else 0.0, block)
                    for u, w in zip(uids, weights, strict=True)
                ],
            )

    async def serve(self, ip: str, port: int) -> None:
        with closing(self._connect()) as db, db:
            me = self._own_uid(db)
            db.execute("UPDATE neurons SET ip=?, port=? WHERE netuid=? AND uid=?", (ip, int(port), self.netuid, me))


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

    async def set_weights(self, uids: Sequence[int], weights: Sequence[float]) -> None:
        client = await self._connected()
        intent = bt.SetWeights(
            netuid=self.netuid,
            uids=[int(u) for u in uids],
            weights=[float(w) for w in weights],
            version_key=self.version_key,
        )
        (await client.execute(intent, self.wallet)).raise_for_failure()

    async def serve(self, ip: str, port: int) -> None:
        client = await self._connected()
        (await client.execute(bt.ServeAxon(netuid=self.netuid, ip=ip, port=int(port)), self.wallet)).raise_for_failure()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def open_chain(network: str, netuid: int, wallet=None) -> Chain:
    """`offline:<sqlite path>` or a bittensor network name / ws(s):// URL."""
    if network.startswith("offline:"):
        path = network.removeprefix("offline:")
        if not os.path.exists(path):
            raise ConfigError(f"offline chain {path} does not exist (create it with audionet-localnet)")
        return OfflineChain(path, netuid, wallet)
    return SubtensorChain(network, netuid, wallet)
