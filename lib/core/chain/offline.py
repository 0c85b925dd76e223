"""A local subnet in one SQLite file, with the real chain's interface (`base.Chain`).

The file is shared by several processes (WAL mode): miners register and publish their endpoint, the validator
reads them and writes weights, and the block height advances with wall-clock time. It hands out the real
`bt.Metagraph` dataclass, so code above this layer cannot tell which chain it talks to.

Incentive mechanisms as the real chain keeps them: the count (1 until the owner sets another; changing it drops
the weights of removed mechanisms and resets the split to even), the split (u16 shares summing to 65535, at most
one per mechanism; none: even), weights per mechanism stored as u16 like `set_weights` sends them. It refuses
what subtensor refuses (`subnet_rules.py`: MaxMechanismCount, max_uids x mechanisms, the weights rate limit)
and keeps committed weights hidden until commit-reveal reveals them.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import astuple, replace
from typing import Optional

import bittensor as bt
import numpy as np

from audionet.lib.core import yuma
from audionet.lib.core.chain import offline_weights as onchain
from audionet.lib.core.chain.base import Chain, Mechanisms, OwnWeights
from audionet.lib.core.chain.offline_metagraph import metagraph_of
from audionet.lib.core.subnet_rules import DEFAULTS, RuleError, SubnetRules


class OfflineChain(Chain):
    """A local subnet in one SQLite file; no network, no tokens. `rules` are the subnet's hyperparameters when
    this call creates it (subtensor's defaults unless given); an existing file keeps its own."""

    def __init__(
        self,
        path: str,
        netuid: int = 1,
        wallet=None,
        block_seconds: float = 12.0,
        rules: SubnetRules = DEFAULTS,
    ):
        self.path, self.netuid, self.wallet = str(path), int(netuid), wallet
        with closing(self._connect()) as db, db:
            db.executescript(
                """
                CREATE TABLE IF NOT EXISTS subnet(netuid INTEGER PRIMARY KEY, genesis REAL, block_seconds REAL);
                CREATE TABLE IF NOT EXISTS neurons(netuid INTEGER, uid INTEGER, hotkey TEXT, coldkey TEXT,
                    stake REAL, validator_permit INTEGER, ip TEXT, port INTEGER, registered INTEGER,
                    PRIMARY KEY(netuid, uid), UNIQUE(netuid, hotkey));
                CREATE TABLE IF NOT EXISTS mechanisms(netuid INTEGER PRIMARY KEY, count INTEGER, split TEXT);
                CREATE TABLE IF NOT EXISTS hyperparameters(netuid INTEGER PRIMARY KEY, tempo INTEGER,
                    weights_rate_limit INTEGER, reveal_period INTEGER, max_uids INTEGER, max_mechanisms INTEGER);
                """
                + onchain.SCHEMA
            )
            db.execute("INSERT OR IGNORE INTO subnet VALUES (?, ?, ?)", (self.netuid, time.time(), block_seconds))
            db.execute("INSERT OR IGNORE INTO mechanisms VALUES (?, 1, NULL)", (self.netuid,))
            rules.check()
            db.execute(
                "INSERT OR IGNORE INTO hyperparameters VALUES (?, ?, ?, ?, ?, ?)", (self.netuid, *astuple(rules))
            )

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30.0)
        db.execute("PRAGMA journal_mode=WAL")
        return db

    def _block_now(self, db: sqlite3.Connection) -> int:
        genesis, seconds = db.execute(
            "SELECT genesis, block_seconds FROM subnet WHERE netuid=?", (self.netuid,)
        ).fetchone()
        return int((time.time() - genesis) / seconds)

    def _mechanisms(self, db: sqlite3.Connection) -> Mechanisms:
        count, split = db.execute("SELECT count, split FROM mechanisms WHERE netuid=?", (self.netuid,)).fetchone()
        return Mechanisms(int(count), tuple(json.loads(split)) if split else ())

    def _rules(self, db: sqlite3.Connection) -> SubnetRules:
        row = db.execute(
            "SELECT tempo, weights_rate_limit, reveal_period, max_uids, max_mechanisms FROM hyperparameters "
            "WHERE netuid=?",
            (self.netuid,),
        ).fetchone()
        return SubnetRules(*(int(v) for v in row))

    def _registered(self, db: sqlite3.Connection) -> int:
        return db.execute("SELECT COUNT(*) FROM neurons WHERE netuid=?", (self.netuid,)).fetchone()[0]

    @property
    def rules(self) -> SubnetRules:
        with closing(self._connect()) as db:
            return self._rules(db)

    # --- offline-only administration (what btcli, the subnet owner and root do on a real chain) ---
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
            uid = self._registered(db)
            if uid >= self._rules(db).max_uids:
                raise RuleError(f"the subnet is full: max_uids {uid} (the offline chain does not prune)")
            db.execute(
                "INSERT INTO neurons VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
                (self.netuid, uid, hotkey, coldkey, stake, int(validator_permit), self._block_now(db)),
            )
            return uid

    def set_rules(self, **changes) -> SubnetRules:
        """Change hyperparameters (`SubnetRules` field names), checked as subtensor checks them; the new rules."""
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            rules = replace(self._rules(db), **changes)
            rules.check(self._mechanisms(db).count, self._registered(db))
            db.execute(
                "UPDATE hyperparameters SET tempo=?, weights_rate_limit=?, reveal_period=?, max_uids=?, "
                "max_mechanisms=? WHERE netuid=?",
                (*astuple(rules), self.netuid),
            )
            return rules

    def set_mechanism_count(self, count: int) -> None:
        """`sudo_set_mechanism_count`: checked against MaxMechanismCount and max_uids x count; a change drops the
        removed mechanisms' weights and commits and resets the split."""
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            self._rules(db).check(int(count), self._registered(db))
            if self._mechanisms(db).count != int(count):
                for table in ("mechanism_weights", "commits"):
                    db.execute(f"DELETE FROM {table} WHERE netuid=? AND mechid>=?", (self.netuid, int(count)))
                db.execute("UPDATE mechanisms SET count=?, split=NULL WHERE netuid=?", (int(count), self.netuid))

    def set_emission_split(self, split: Optional[Sequence[int]]) -> None:
        """`sudo_set_mechanism_emission_split`: u16 shares summing to 65535, at most one per mechanism
        (None: back to even)."""
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            if split is not None:
                values = [int(x) for x in split]
                count = self._mechanisms(db).count
                if not values or len(values) > count or sum(values) != yuma.U16_MAX or min(values) < 0:
                    raise ValueError(f"a split is 1 to {count} u16 shares summing to {yuma.U16_MAX}, not {values}")
            text = None if split is None else json.dumps(values)
            db.execute("UPDATE mechanisms SET split=? WHERE netuid=?", (text, self.netuid))

    def _reveal(self, db: sqlite3.Connection) -> None:
        onchain.reveal(db, self.netuid, self._rules(db), self._block_now(db))

    def weights(self, validator_uid: int, mechid: int = 0) -> dict[int, float]:
        """One validator's revealed weights on one mechanism, each row summing to 1 (bittensor's `weights` read)."""
        with closing(self._connect()) as db, db:
            self._reveal(db)
            return onchain.weights(db, self.netuid, validator_uid, mechid)

    def pending(self) -> int:
        """Commits not revealed yet."""
        with closing(self._connect()) as db, db:
            self._reveal(db)
            return onchain.pending(db, self.netuid)

    def emission(self) -> dict[int, float]:
        """Each uid's share of the miners' emission: per mechanism, Yuma consensus over the permitted
        validators' revealed weights (`yuma.epoch`, no bonds needed for incentive), times the mechanism's share."""
        with closing(self._connect()) as db, db:
            self._reveal(db)
            mechanisms = self._mechanisms(db)
            neurons = db.execute(
                "SELECT uid, stake, validator_permit FROM neurons WHERE netuid=? ORDER BY uid", (self.netuid,)
            ).fetchall()
            rows = db.execute(
                "SELECT mechid, validator_uid, uid, value FROM mechanism_weights WHERE netuid=?", (self.netuid,)
            ).fetchall()
        n = len(neurons)
        stake = np.array([s if permit else 0.0 for _, s, permit in neurons])
        total = np.zeros(n)
        for mechid, share in enumerate(mechanisms.shares):
            matrix = np.zeros((n, n))
            for m, validator, uid, value in rows:
                if m == mechid and validator < n and uid < n:
                    matrix[validator, uid] = value
            total += share * yuma.epoch(matrix, stake).incentive
        return {uid: float(total[uid]) for uid in range(n)}

    # --- the Chain interface ---
    async def metagraph(self) -> bt.Metagraph:
        with closing(self._connect()) as db:
            block = self._block_now(db)
            rules = self._rules(db)
            rows = db.execute(
                "SELECT uid, hotkey, coldkey, stake, validator_permit, ip, port, registered "
                "FROM neurons WHERE netuid=? ORDER BY uid",
                (self.netuid,),
            ).fetchall()
            last_update = onchain.last_updates(db, self.netuid, 0)  # the metagraph is mechanism 0's
        return metagraph_of(self.netuid, block, rules, rows, last_update)

    async def block(self) -> int:
        with closing(self._connect()) as db:
            return self._block_now(db)

    async def mechanisms(self) -> Mechanisms:
        with closing(self._connect()) as db:
            return self._mechanisms(db)

    def _own_uid(self, db: sqlite3.Connection, required: bool = True) -> Optional[int]:
        hotkey = self.wallet.hotkey.ss58_address
        row = db.execute("SELECT uid FROM neurons WHERE netuid=? AND hotkey=?", (self.netuid, hotkey)).fetchone()
        if row is None and required:
            raise RuntimeError(f"hotkey {hotkey} is not registered on offline netuid {self.netuid}")
        return None if row is None else row[0]

    async def own_weights(self, mechid: int = 0) -> Optional[OwnWeights]:
        """Revealed weights only (a commit not revealed yet is not read back, as on subtensor, but counted as
        pending); the block counts commits (LastUpdate is bumped at commit time)."""
        with closing(self._connect()) as db, db:
            self._reveal(db)
            me = self._own_uid(db, required=False)
            if me is None:
                return None
            weights, pending = (
                onchain.weights(db, self.netuid, me, mechid),
                onchain.pending(db, self.netuid, me, mechid),
            )
            if not weights and not pending:
                return None
            return OwnWeights(weights, int(onchain.last_set(db, self.netuid, me, mechid)), pending > 0)

    async def set_weights(self, uids: Sequence[int], weights: Sequence[float], mechid: int = 0) -> None:
        """What SetWeights does on subtensor: refused faster than the rate limit; committed and revealed a
        reveal period later under commit-reveal, stored at once without it."""
        from bittensor.intents import normalize  # max-upscaled to u16, zeros dropped: what the SDK sends

        stored_uids, values = normalize([int(u) for u in uids], [float(w) for w in weights])
        if not stored_uids:
            raise ValueError("all weights are zero; nothing to set")
        with closing(self._connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")
            me = self._own_uid(db)
            if not 0 <= mechid < self._mechanisms(db).count:
                raise RuntimeError(f"MechanismDoesNotExist: offline netuid {self.netuid} has no mechanism {mechid}")
            rules, block = self._rules(db), self._block_now(db)
            last = onchain.last_set(db, self.netuid, me, mechid)
            wait = rules.wait(last, block)
            if wait:
                raise RuntimeError(
                    f"SettingWeightsTooFast: weights on mechanism {mechid} were set at block {last}; the rate limit "
                    f"is {rules.weights_rate_limit} blocks, retry in {wait}"
                )
            if rules.reveal_period:
                onchain.commit(db, self.netuid, mechid, me, stored_uids, values, block)
            else:
                onchain.store(db, self.netuid, mechid, me, stored_uids, values, block)

    async def serve(self, ip: str, port: int) -> None:
        with closing(self._connect()) as db, db:
            me = self._own_uid(db)
            db.execute("UPDATE neurons SET ip=?, port=? WHERE netuid=? AND uid=?", (ip, int(port), self.netuid, me))
