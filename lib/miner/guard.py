"""Who holds the miner's connections, and which one gives way when a newcomer needs a place.

Every open connection is one of:

* **owned** by a caller: a request on it carried a signature that verified (the miner calls the
  `audionet.verified` scope extension then), or it comes from an address where that caller's signature verified
  recently (*provisional*: TCP's handshake proves the address, the earlier signature the caller behind it). A
  caller holds at most its entitlement of connections (`limits.entitled`: its share of the competing stake, at
  least a round's worth); past it, its idle ones give way to its new ones, and a newly verified connection
  beyond it is refused (503).
* a **stranger**: it has proven nothing (a header that names a registered hotkey proves nothing until its
  signature is checked against the body). Strangers share a budget of their own, shared fairly across addresses
  (IPv6 counted per /64; at most `max_unverified_per_ip` from one). At the budget a newcomer takes the place of
  the oldest stranger that *idles*; if none idles, of the oldest stranger from an address that *floods* (one that
  opened more than FLOOD_ARRIVALS connections lately); else of the oldest from the address holding the most, if
  that is more than a round's worth and two more than the newcomer's; else of the oldest that has awaited a head
  for more than FIRST_HEAD_S (a client sends its head as soon as it connects: under a churn of connections that
  send nothing, a newcomer's head is read). A newcomer from an address that floods takes no one's place, and one
  that finds no place is turned away (an accept and a close). A caller's first verified signature also makes the
  other strangers from its address its own (within its entitlement).

A connection idles when its current stage (awaiting a head, reading a body) has gone on past the grace without
the head arriving, or, for a body, without a byte for the grace or below the minimum upload rate: a slow link
that keeps delivering is never the one pushed out (unless it floods), and a body's deadline scales with its size
at that rate. At the cap on all connections, an idle stranger gives way first, then one from an address that
floods, then the idle connection of the caller holding the most of its entitlement, then (for a newcomer that is a
caller's) the oldest connection of the caller with the least stake below its caller's, busy or not; a newcomer is
turned away only when none of these is left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Optional, Protocol

from audionet.lib.miner.addresses import Arrivals, KnownAddresses
from audionet.lib.miner.limits import CONNECTION_FLOOR, MAX_BACKLOG, GuardSettings, Progress, entitled

log = logging.getLogger("miner.connections")
FIRST_HEAD_S = 0.1  # at the budget, a stranger awaiting a head this long gives way to a newcomer, oldest first


class Connection(Protocol):
    """What the guard reads of a connection (`connections.GuardedH11Protocol`)."""

    group: str
    owner: Optional[str]  # the caller it counts for, None for a stranger
    verified: bool  # owned through a signature on it (not only its address)
    waiting_since: float  # when it began awaiting its current head
    progress: Progress

    def idles(self, now: float) -> bool: ...

    def close(self) -> None: ...


class ConnectionGuard:
    """The limits, and who holds which connection, shared by the connections of one server (event loop only)."""

    def __init__(
        self,
        settings: GuardSettings,
        shares: Callable[[str], float] = lambda _hotkey: 0.0,
        backlog: int = MAX_BACKLOG,
        clock: Callable[[], float] = time.monotonic,
    ):
        """`shares`: a caller's share of the competing stake (`limits.stake_share`, the app's too); `backlog`: the listen backlog
        (`lib/miner/server.ensure_fd_room`)."""
        self.settings, self.shares, self.backlog, self.clock = settings, shares, backlog, clock
        self.live: dict[Connection, None] = {}  # open and not being closed by the guard
        self.strangers: dict[Connection, None] = {}  # oldest first
        self.by_group: dict[str, dict[Connection, None]] = {}  # strangers per address group
        self.crowded: dict[str, None] = {}  # address groups holding more than a round's worth of strangers
        self.owned: dict[str, dict[Connection, None]] = {}  # per caller, oldest first
        self.known = KnownAddresses(shares, clock)
        self.arrivals = Arrivals(clock)

    def limit(self, hotkey: str) -> int:
        """Connections `hotkey` may hold: its share of the cap, at least CONNECTION_FLOOR."""
        return entitled(self.shares(hotkey), self.settings.max_connections, CONNECTION_FLOOR)

    def arrived(self, conn: Connection) -> bool:
        """Count a new connection and make room for it; False: turn it away (the caller closes it)."""
        now = self.clock()
        self.arrivals.arrived(conn.group)
        caller = self.known.caller(conn.group)
        if caller is not None and self._room_for(caller):
            self._own(conn, caller, verified=False)
        elif not self._stranger_room(conn, now):
            return False
        self.live[conn] = None
        if len(self.live) <= self.settings.max_connections:
            return True
        victim = self._victim(now, exclude=conn)
        if victim is None:
            self.left(conn)
            log.warning("at the cap of %d connections, none idle: turned new connections away", len(self.live))
            return False
        self._close(victim, "at the cap of %d connections: closed an idle one", self.settings.max_connections)
        return True

    def verified(self, conn: Connection, hotkey: str) -> bool:
        """A request on `conn` carried `hotkey`'s signature: the connection is its own now. False when `hotkey`
        already holds its entitlement and none of its other connections is idle (refuse the request)."""
        if conn.owner == hotkey and conn.verified:
            return True
        self._disown(conn)
        self.known.remember(conn.group, hotkey)
        held = self.owned.get(hotkey, {})
        if len(held) >= self.limit(hotkey) and not self._close_idle_of(hotkey, exclude=conn):
            return False  # counted for no one while its refusal is sent; then it closes
        self._own(conn, hotkey, verified=True)
        self._adopt(conn.group)
        return True

    def _adopt(self, group: str) -> None:
        """The strangers from `group` are the caller its address is known for now, within its entitlement: the
        other connections of a first contact's round, opened before its first signature verified, are no longer
        strangers that newcomers push out."""
        caller = self.known.caller(group)
        for conn in list(self.by_group.get(group, {})) if caller is not None else ():
            if len(self.owned.get(caller, {})) >= self.limit(caller):
                return
            self._disown(conn)
            self._own(conn, caller, verified=False)

    def left(self, conn: Connection) -> None:
        """`conn` is closing or gone: it no longer counts (uvicorn's own set keeps it until it is lost)."""
        self.live.pop(conn, None)
        self._disown(conn)

    def held(self) -> dict[str, int]:
        """Per caller, the connections it holds (verified and provisional)."""
        return {hotkey: len(conns) for hotkey, conns in self.owned.items()}

    def _room_for(self, caller: str) -> bool:
        """Whether `caller` may hold one more connection, closing one of its idle ones if it must."""
        return len(self.owned.get(caller, {})) < self.limit(caller) or self._close_idle_of(caller)

    def _close_idle_of(self, caller: str, exclude: Optional[Connection] = None) -> bool:
        now = self.clock()
        idle = [c for c in self.owned.get(caller, {}) if c is not exclude and c.idles(now)]
        if not idle:
            return False
        victim = min(idle, key=lambda c: c.waiting_since if c.progress.stage == "head" else now)
        self._close(victim, "a caller at its share of connections opened another: closed its idle one")
        return True

    def _stranger_room(self, conn: Connection, now: float) -> bool:
        same = self.by_group.get(conn.group, {})
        if len(same) >= self.settings.max_unverified_per_ip:
            log.warning("%s holds %d unverified connections: turned its newest away", conn.group, len(same))
            return False
        if len(self.strangers) >= self.settings.unverified_budget:
            victim = None if self.arrivals.floods(conn.group) else self._stranger_victim(now, conn)
            if victim is None:
                log.warning(
                    "at the budget of %d unverified connections, none idle or flooding (or the newcomer's address"
                    " floods): turned a newcomer away",
                    self.settings.unverified_budget,
                )
                return False
            self._close(victim, "at the budget of %d unverified connections: closed one", len(self.strangers))
        self.strangers[conn] = None
        same = self.by_group.setdefault(conn.group, {})
        same[conn] = None
        if len(same) > CONNECTION_FLOOR:
            self.crowded[conn.group] = None
        return True

    def _stranger_victim(self, now: float, exclude: Connection) -> Optional[Connection]:
        """Not from `exclude`'s address: the oldest stranger that idles, else the oldest from an address that
        floods, else the oldest of the address holding the most, if that is more than a round's worth
        (CONNECTION_FLOOR) and at least two more than `exclude`'s would. (Run for every newcomer at the budget,
        so it stops early: strangers are kept oldest first, and none younger than the grace can idle.)"""
        young = now - self.settings.grace_s
        for conn in self.strangers:
            if conn.progress.opened > young:
                break
            if conn.group != exclude.group and conn.idles(now):
                return conn
        for group in [g for g in self.arrivals.flooding if g in self.by_group and g != exclude.group]:
            if self.arrivals.floods(group):
                return next(iter(self.by_group[group]))
        heaviest = max(self.crowded, key=lambda group: len(self.by_group[group]), default=None)
        if heaviest is not None and heaviest != exclude.group:
            held, own = len(self.by_group[heaviest]), len(self.by_group.get(exclude.group, {}))
            if held >= own + 2:
                return next(iter(self.by_group[heaviest]))
        return self._slow_to_speak(now, exclude)

    def _slow_to_speak(self, now: float, exclude: Connection) -> Optional[Connection]:
        """The oldest stranger that has awaited a head for more than FIRST_HEAD_S (issue 45: under 1,000 fresh
        connections a second that send nothing, a validator's first connection was turned away at accept, since
        none of them idled yet; a client sends its head as soon as it connects, so a newcomer now takes the place
        of one that has not, and has its head read)."""
        cutoff = now - FIRST_HEAD_S
        for conn in self.strangers:
            if conn.progress.opened > cutoff:
                break
            if conn.group != exclude.group and conn.progress.stage == "head" and conn.progress.started <= cutoff:
                return conn
        return None

    def _victim(self, now: float, exclude: Connection) -> Optional[Connection]:
        """At the cap: a stranger (idle, else flooding), else the idle connection of the caller holding the most
        of its share; else, for a newcomer that is a caller's, the oldest connection of the caller with the least
        stake below its own, whatever it is doing (its request is dropped as if its client had left)."""
        stranger = self._stranger_victim(now, exclude)
        if stranger is not None:
            return stranger
        ranked = sorted(self.owned, key=lambda h: len(self.owned[h]) / self.limit(h), reverse=True)
        for hotkey in ranked:
            idle = [c for c in self.owned[hotkey] if c is not exclude and c.idles(now)]
            if idle:
                return min(idle, key=lambda c: c.waiting_since if c.progress.stage == "head" else now)
        if exclude.owner is None:
            return None
        share = self.shares(exclude.owner)
        poorer = [h for h in self.owned if h != exclude.owner and self.shares(h) < share]
        return next(iter(self.owned[min(poorer, key=self.shares)]), None) if poorer else None

    def _own(self, conn: Connection, hotkey: str, verified: bool) -> None:
        conn.owner, conn.verified = hotkey, verified
        self.owned.setdefault(hotkey, {})[conn] = None

    def _disown(self, conn: Connection) -> None:
        if conn in self.strangers:
            del self.strangers[conn]
            same = self.by_group[conn.group]
            del same[conn]
            if len(same) <= CONNECTION_FLOOR:
                self.crowded.pop(conn.group, None)
            if not same:
                del self.by_group[conn.group]
        if conn.owner is not None:
            held = self.owned.get(conn.owner, {})
            held.pop(conn, None)
            if not held:
                self.owned.pop(conn.owner, None)
            conn.owner, conn.verified = None, False

    def _close(self, victim: Connection, message: str, *args) -> None:
        log.warning(message, *args)
        self.left(victim)
        victim.close()
