"""The miner's limits: what one verified caller may hold (places follow stake), the connection guard's limits
(`GuardSettings`: its fields are the --miner.* connection flags) and how a connection's current stage goes
(`Progress`): what decides whether it *idles*, so that a newcomer may take its place (`guard.ConnectionGuard`).

A caller is a validator's hotkey whose signature verified. It may hold at most its *entitlement* of each kind
of place (open connections, and per service the places in line: parsing, waiting and generating): its share of
the stake of every caller the access policy admits (`AccessPolicy.share`), times the places there are, rounded
up, and never fewer than a floor, so a validator with little stake can still run its rounds (three services at
once) and ask for health. When a kind of place is full, a caller with more stake takes the place of the one with
the least (`pool.line`), so entitlements decide how much one caller can hold and stake decides who waits.

    caller = Caller(hotkey, stake=member.stake, share=policy.share(hotkey))
    entitled(caller.share, capacity=512, floor=CONNECTION_FLOOR)   # its connections
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from audionet.lib.core.config import Settings, positive_int, setting
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.protocol import IDLE_CONNECTION_S

if TYPE_CHECKING:  # the pool imports this module, and the GPU machine's benchmarks run it without bittensor
    from audionet.lib.core.auth import AccessPolicy

# Signed /v1/health lists, per caller, what it holds at each stage.
STAGES = ("connections", "parsing", "waiting", "generating")
CONNECTION_FLOOR = 4  # a round's three requests at once, and a health check
MAX_BACKLOG = 1024  # the longest listen backlog (lib/miner/server.py says why; ensure_fd_room may choose less)
LINE_FLOOR = 1  # per service: a round asks each service once


@dataclass(frozen=True)
class Caller:
    """A verified caller: its hotkey, its stake (the line's order) and its share of the competing stake."""

    hotkey: str
    stake: float
    share: float = 1.0


ANONYMOUS = Caller("", 0.0, 1.0)  # benchmarks and tests that drive the pool directly: one caller, every place


OWN_SHARE = 1e-9  # the miner's own hotkey (its operator): a caller with a share too small to matter, the floor


def stake_share(policy: AccessPolicy, own_hotkey: str) -> Callable[[str], float]:
    """A caller's share of the competing stake (`AccessPolicy.share`), built once and handed to the connection guard
    and the app; the miner's own hotkey (asking for health or, in its self-check, audio) gets the floor of places."""

    def share(hotkey: str) -> float:
        value = policy.share(hotkey)
        return value if value > 0 or hotkey != own_hotkey else OWN_SHARE

    return share


def entitled(share: float, capacity: int, floor: int) -> int:
    """Places of `capacity` a caller with `share` (0..1) of the competing stake may hold: its share, rounded up,
    at least `floor`, at most all of them."""
    return max(0, min(capacity, max(floor, math.ceil(share * capacity - 1e-9))))


def percent(share: float) -> str:
    """A share for a person: '0.99 %', '12 %'."""
    value = share * 100
    return f"{value:.2g} %" if value < 10 else f"{value:.0f} %"


@dataclass(frozen=True)
class GuardSettings(Settings):
    """connections (places follow stake; strangers share a budget of their own)"""

    head_timeout_s: float = setting(
        "miner.head_timeout", IDLE_CONNECTION_S, type=float, help="seconds each request head may take to arrive"
    )
    max_connections: int = setting(
        "miner.max_connections",
        512,
        type=positive_int,
        help="open connections at most; a verified caller holds at most its share of the stake of them (at least 4)",
    )
    max_unverified: Optional[int] = setting(
        "miner.max_unverified",
        None,
        type=positive_int,
        help="connections that have proven nothing yet, at most (default: half of --miner.max_connections); at it a "
        "newcomer takes the place of one that idles, or of one from an address that floods",
    )
    max_unverified_per_ip: int = setting(
        "miner.max_unverified_per_ip",
        64,
        type=positive_int,
        help="unverified connections from one address (IPv6: one /64) at most",
    )
    grace_s: float = setting(
        "miner.idle_grace",
        2.0,
        type=float,
        help="seconds a connection may wait for its head, or between bytes of its body, before it idles (a newcomer "
        "may take its place)",
    )
    min_upload_rate: float = setting(
        "miner.min_upload_rate",
        100_000.0,
        type=float,
        help="bytes per second a body must keep up after the grace (slower ones idle); a body's deadline is the "
        "grace plus its size at this rate",
    )

    def __post_init__(self) -> None:
        if self.max_unverified is None:
            object.__setattr__(self, "max_unverified", self.max_connections // 2)
        if not 1 <= self.unverified_budget <= self.max_connections or self.max_unverified_per_ip < 1:
            raise ConfigError(
                f"--miner.max_unverified {self.unverified_budget} must be 1 to --miner.max_connections"
                f" {self.max_connections}, and --miner.max_unverified_per_ip at least 1"
            )
        if self.grace_s <= 0 or self.min_upload_rate <= 0 or self.head_timeout_s <= 0:
            raise ConfigError("--miner.head_timeout, --miner.idle_grace and --miner.min_upload_rate must be above 0")

    @property
    def unverified_budget(self) -> int:
        return int(self.max_unverified or 0)

    def body_deadline_s(self, size: int) -> float:
        """The time a body of `size` bytes gets to arrive: the grace, plus its size at the minimum rate."""
        return self.grace_s + size / self.min_upload_rate


@dataclass
class Progress:
    """How a connection's current stage goes: "head" (awaiting a request head), "body" (reading its body) or
    "app" (the request is being handled); when the stage began, the bytes received since, the last byte's time."""

    stage: str = "head"
    started: float = 0.0
    received: int = 0
    last_byte: float = 0.0
    opened: float = 0.0  # when the connection opened: none younger than the grace can idle

    def begin(self, stage: str, now: float) -> None:
        self.stage, self.started, self.received = stage, now, 0

    def open(self, now: float) -> None:
        """A new connection: awaiting its first head since `now`."""
        self.begin("head", now)
        self.last_byte = self.opened = now

    def add(self, size: int, now: float) -> None:
        self.received += size
        self.last_byte = now

    def idles(self, settings: GuardSettings, now: float, between_requests: bool = False) -> bool:
        """Whether a newcomer may push the connection out: `between_requests` (a caller's kept-alive connection
        with nothing pending), or its stage past the grace without progress: a head not yet complete, a body
        without a byte for the grace or below the minimum upload rate. A request being handled never idles."""
        elapsed = now - self.started
        if self.stage == "head":
            return between_requests or elapsed >= settings.grace_s
        if self.stage == "body":
            slow = self.received < settings.min_upload_rate * (elapsed - settings.grace_s)
            return slow or now - self.last_byte >= settings.grace_s
        return False
