"""The offline chain's weights as subtensor keeps them, in its SQLite file: `Weights` (revealed, u16, per
mechanism and validator), the commits commit-reveal has not revealed yet (`TimelockedWeightCommits`) and each
uid's `LastUpdate` per mechanism (its registration block, then the block it last set or committed weights there:
a commit moves it, its reveal does not).

Functions of one open connection, for `offline.OfflineChain`, which owns the transactions.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Optional

from audionet.lib.core.subnet_rules import SubnetRules

SCHEMA = """
CREATE TABLE IF NOT EXISTS mechanism_weights(netuid INTEGER, mechid INTEGER,
    validator_uid INTEGER, uid INTEGER, value INTEGER, block INTEGER,
    PRIMARY KEY(netuid, mechid, validator_uid, uid));
CREATE TABLE IF NOT EXISTS commits(netuid INTEGER, mechid INTEGER, validator_uid INTEGER,
    block INTEGER, uids TEXT, value_list TEXT);
"""


def reveal(db: sqlite3.Connection, netuid: int, rules: SubnetRules, now: int) -> None:
    """Commits whose reveal epoch has come replace their validator's weights on that mechanism, in order."""
    rows = db.execute(
        "SELECT rowid, mechid, validator_uid, block, uids, value_list FROM commits WHERE netuid=? ORDER BY block",
        (netuid,),
    ).fetchall()
    for rowid, mechid, validator, block, uids, values in rows:
        if rules.revealed(block, now, netuid):
            store(db, netuid, mechid, validator, json.loads(uids), json.loads(values), block)
            db.execute("DELETE FROM commits WHERE rowid=?", (rowid,))


def store(db: sqlite3.Connection, netuid: int, mechid: int, validator: int, uids: list, values: list, block: int):
    """A validator's weights on a mechanism, set (or committed) at `block`, replacing its row there."""
    db.execute(
        "DELETE FROM mechanism_weights WHERE netuid=? AND mechid=? AND validator_uid=?", (netuid, mechid, validator)
    )
    db.executemany(
        "INSERT INTO mechanism_weights VALUES (?, ?, ?, ?, ?, ?)",
        [(netuid, mechid, validator, u, v, block) for u, v in zip(uids, values)],
    )


def commit(db: sqlite3.Connection, netuid: int, mechid: int, validator: int, uids: list, values: list, block: int):
    """Weights committed at `block`, hidden until `reveal` reveals them."""
    db.execute(
        "INSERT INTO commits VALUES (?, ?, ?, ?, ?, ?)",
        (netuid, mechid, validator, block, json.dumps(uids), json.dumps(values)),
    )


def weights(db: sqlite3.Connection, netuid: int, validator: int, mechid: int) -> dict[int, float]:
    """One validator's revealed weights on one mechanism, the row summing to 1 (bittensor's `weights` read)."""
    rows = db.execute(
        "SELECT uid, value FROM mechanism_weights WHERE netuid=? AND mechid=? AND validator_uid=? ORDER BY uid",
        (netuid, mechid, validator),
    ).fetchall()
    total = sum(value for _, value in rows)
    return {uid: value / total for uid, value in rows} if total else {}


def pending(db: sqlite3.Connection, netuid: int, validator: Optional[int] = None, mechid: int = 0) -> int:
    """Commits not revealed yet: all the subnet's, or one validator's on one mechanism."""
    if validator is None:
        return db.execute("SELECT COUNT(*) FROM commits WHERE netuid=?", (netuid,)).fetchone()[0]
    return db.execute(
        "SELECT COUNT(*) FROM commits WHERE netuid=? AND mechid=? AND validator_uid=?", (netuid, mechid, validator)
    ).fetchone()[0]


def last_set(db: sqlite3.Connection, netuid: int, validator: int, mechid: int) -> Optional[int]:
    """The block a validator last set or committed weights on a mechanism; None where it never has."""
    return last_updates(db, netuid, mechid, registration=False).get(validator)


def last_updates(db: sqlite3.Connection, netuid: int, mechid: int, registration: bool = True) -> dict[int, int]:
    """Each uid's `LastUpdate` on a mechanism: the block it last set or committed weights there, else (with
    `registration`) the block it registered at, where subtensor starts it (on every mechanism the subnet runs
    then; one added later starts at 0 there, which this does not keep apart)."""
    rows = db.execute(
        "SELECT validator_uid, MAX(block) FROM (SELECT validator_uid, block FROM mechanism_weights WHERE netuid=? "
        "AND mechid=? UNION ALL SELECT validator_uid, block FROM commits WHERE netuid=? AND mechid=?) "
        "GROUP BY validator_uid",
        (netuid, mechid) * 2,
    ).fetchall()
    updates = {int(uid): int(block) for uid, block in rows}
    if registration:
        joined = db.execute("SELECT uid, registered FROM neurons WHERE netuid=?", (netuid,)).fetchall()
        updates = {int(uid): max(int(block), updates.get(int(uid), 0)) for uid, block in joined}
    return updates
