"""Places follow stake: what one verified caller may hold of the miner.

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

from audionet.lib.core.auth import AccessPolicy

# Signed /v1/health lists, per caller, what it holds at each stage.
STAGES = ("connections", "parsing", "waiting", "generating")
CONNECTION_FLOOR = 4  # a round's three requests at once, and a health check
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
