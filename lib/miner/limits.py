"""The connection guard's limits (`GuardSettings`, from the --miner.* connection flags defined here) and how a
connection's current stage goes (`Progress`): what decides whether it *idles*, so that a newcomer may take its
place (`guard.ConnectionGuard`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import flag, positive_int
from audionet.lib.core.errors import ConfigError


@dataclass(frozen=True)
class GuardSettings:
    """The connection guard's limits: built by the miner from its --miner.* connection flags."""

    head_timeout_s: float = 5.0  # a request head must be complete this long after the connection or answer
    max_connections: int = 512
    max_unverified: Optional[int] = None  # strangers at most; default half of max_connections
    max_unverified_per_ip: int = 64  # strangers from one address (IPv6: one /64) at most
    grace_s: float = 2.0  # a stage may go this long without progress before it idles
    min_upload_rate: float = 100_000.0  # bytes per second a body must keep up past the grace

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

    @classmethod
    def from_flags(cls, args) -> GuardSettings:
        """From the miner's --miner.* connection flags (neurons/miner.py)."""
        return cls(
            head_timeout_s=args.miner_head_timeout,
            max_connections=args.miner_max_connections,
            max_unverified=args.miner_max_unverified,
            max_unverified_per_ip=args.miner_max_unverified_per_ip,
            grace_s=args.miner_idle_grace,
            min_upload_rate=args.miner_min_upload_rate,
        )

    @property
    def unverified_budget(self) -> int:
        return int(self.max_unverified or 0)

    def body_deadline_s(self, size: int) -> float:
        """The time a body of `size` bytes gets to arrive: the grace, plus its size at the minimum rate."""
        return self.grace_s + size / self.min_upload_rate


def add_connection_flags(parser) -> None:
    """--miner.head_timeout, --miner.max_connections, --miner.max_unverified(_per_ip), --miner.idle_grace and
    --miner.min_upload_rate: what `GuardSettings.from_flags` reads."""
    group = parser.add_argument_group("connections (places follow stake; strangers share a budget of their own)")
    flag(group, "miner.head_timeout", type=float, default=5.0, help="seconds each request head may take to arrive")
    flag(
        group,
        "miner.max_connections",
        type=positive_int,
        default=512,
        help="open connections at most; a verified caller holds at most its share of the stake of them (at least 4)",
    )
    flag(
        group,
        "miner.max_unverified",
        type=positive_int,
        default=None,
        help="connections that have proven nothing yet, at most (default: half of --miner.max_connections); at it a "
        "newcomer takes the place of one that idles, or of one from an address that floods",
    )
    flag(
        group,
        "miner.max_unverified_per_ip",
        type=positive_int,
        default=64,
        help="unverified connections from one address (IPv6: one /64) at most",
    )
    flag(
        group,
        "miner.idle_grace",
        type=float,
        default=2.0,
        help="seconds a connection may wait for its head, or between bytes of its body, before it idles (a newcomer "
        "may take its place)",
    )
    flag(
        group,
        "miner.min_upload_rate",
        type=float,
        default=100_000.0,
        help="bytes per second a body must keep up after the grace (slower ones idle); a body's deadline is the "
        "grace plus its size at this rate",
    )


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
