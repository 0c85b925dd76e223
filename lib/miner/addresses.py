"""What the miner remembers about the addresses its connections come from: the unit they are counted in (an
IPv4 address, an IPv6 /64), which caller's signature verified from each (`KnownAddresses`), and how many
connections each opened lately (`Arrivals`: an address that opens more than a few dozen in seconds floods).
Both tables are bounded: the address heard from least recently is forgotten first."""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from typing import Optional

KNOWN_ADDRESSES = 4096  # address groups remembered in each table
KNOWN_FOR_S = 24 * 3600.0  # how long a verified caller's address keeps attributing connections to it
FLOOD_ARRIVALS = 32.0  # an address floods while its connections of the last ~FLOOD_MEMORY_S number more
FLOOD_MEMORY_S = 10.0  # (an exponential decay: a validator opens three a round)


def address_group(address: str) -> str:
    """The unit addresses are counted in: an IPv4 address, or an IPv6 /64 (one host gets a whole /64); an
    IPv4-mapped IPv6 address counts as its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network((ip, 64), strict=False))
    return str(ip)


class KnownAddresses:
    """Address group -> the caller whose signature verified from it most recently (the larger share wins)."""

    def __init__(self, shares: Callable[[str], float], clock: Callable[[], float] = time.monotonic):
        self.shares, self.clock = shares, clock
        self.callers: dict[str, tuple[str, float]] = {}  # group -> (hotkey, when), least recent first

    def remember(self, group: str, hotkey: str) -> None:
        held = self.callers.pop(group, None)
        if held is not None and held[0] != hotkey and self.shares(held[0]) > self.shares(hotkey):
            hotkey = held[0]
        self.callers[group] = (hotkey, self.clock())
        while len(self.callers) > KNOWN_ADDRESSES:
            del self.callers[next(iter(self.callers))]

    def caller(self, group: str) -> Optional[str]:
        held = self.callers.get(group)
        if held is None or self.clock() - held[1] > KNOWN_FOR_S or self.shares(held[0]) <= 0:
            return None
        return held[0]


class Arrivals:
    """How many connections each address group opened lately (decaying with FLOOD_MEMORY_S), and whether it
    floods; at most KNOWN_ADDRESSES groups remembered (a forgotten one starts again from 0)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.groups: dict[str, tuple[float, float]] = {}  # group -> (decayed count, when), least recent first
        self.flooding: dict[str, None] = {}  # groups that flooded at their last arrival (some may have calmed)

    def count(self, group: str) -> float:
        value, when = self.groups.get(group, (0.0, 0.0))
        return value * math.exp((when - self.clock()) / FLOOD_MEMORY_S)

    def arrived(self, group: str) -> None:
        value = self.count(group) + 1.0
        self.groups.pop(group, None)
        self.groups[group] = (value, self.clock())
        if value > FLOOD_ARRIVALS:
            self.flooding[group] = None
        else:
            self.flooding.pop(group, None)
        while len(self.groups) > KNOWN_ADDRESSES:
            self.flooding.pop(next(iter(self.groups)), None)
            del self.groups[next(iter(self.groups))]

    def floods(self, group: str) -> bool:
        calm = self.count(group) <= FLOOD_ARRIVALS
        if calm:
            self.flooding.pop(group, None)
        return not calm
