"""Who holds the miner's connections and who gives way (`ConnectionGuard`), on a clock the test moves: the
holes of issue 37 one by one. The same guard runs under a real server in test_connections.py and the e2e tests."""

from typing import Optional

import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.addresses import address_group
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.limits import GuardSettings, Progress

SETTINGS = GuardSettings(head_timeout_s=5.0, max_connections=100, max_unverified=20, max_unverified_per_ip=8)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Conn:
    """A connection as the guard sees it (the real one is connections.GuardedH11Protocol)."""

    def __init__(self, address: str, clock: Clock):
        self.group, self.clock = address_group(address), clock
        self.owner: Optional[str] = None
        self.verified, self.closed = False, False
        self.progress = Progress()
        self.progress.open(clock.now)
        self.waiting_since = clock.now

    def idles(self, now: float) -> bool:
        return self.progress.idles(SETTINGS, now, self.verified and self.progress.stage == "head")

    def send_head(self, body: bool = True) -> "Conn":
        """The head arrives now (with a body to follow, or a whole request the app handles)."""
        self.progress.begin("body" if body else "app", self.clock.now)
        return self

    def close(self) -> None:
        self.closed = True


def guard_with(shares=None, settings=SETTINGS):
    clock = Clock()
    guard = ConnectionGuard(settings, shares=lambda h: (shares or {}).get(h, 0.0), clock=clock)

    def connect(address: str) -> Optional[Conn]:
        conn = Conn(address, clock)
        return conn if guard.arrived(conn) else None

    return guard, clock, connect


def test_a_validators_round_from_one_address_gets_in_among_300_addresses_holding_a_partial_head_each():
    """Hole 3: at the budget the second connection of a validator's round was turned away as coming from a
    'busy' address. Partial heads past the grace idle, and any newcomer takes an idle one's place."""
    guard, clock, connect = guard_with()
    flood = [connect(f"127.1.{i // 250}.{1 + i % 250}") for i in range(300)]
    assert sum(c is not None for c in flood) == 20  # the budget: the rest turned away (none idled yet)
    clock.now += SETTINGS.grace_s  # the partial heads never finish
    round_ = [connect("127.0.0.1") for _ in range(3)]
    assert all(round_) and sum(c.closed for c in flood if c) == 3


def test_a_slow_link_that_keeps_delivering_survives_churn_from_fresh_addresses():
    """Hole 4: each newcomer from a fresh address evicted the oldest unverified connection, so a WAN validator
    lasted 256/rate seconds. A connection whose head has arrived gives way only when it idles."""
    guard, clock, connect = guard_with()
    honest = connect("10.0.0.1")
    for i in range(1000):  # 1,000 fresh addresses a second, each sending nothing
        clock.now += 0.001
        if i == 100:
            honest.send_head()  # its head, a tenth of a second in
        if i % 100 == 0:
            honest.progress.add(5_000, clock.now)  # its body, 50 KB/s through the grace
        connect(f"10.{1 + i // 250}.0.{1 + i % 250}")
    assert not honest.closed and honest in guard.strangers
    clock.now += SETTINGS.grace_s
    assert connect("10.9.9.9") is not None  # the churn's own connections idle past the grace, and give way


def test_a_first_contact_gets_its_head_read_under_churn_and_brings_its_rounds_other_connections_in():
    """Issue 45: under 1,000 fresh connections a second that send nothing, none idled within the grace, so every
    newcomer was turned away at accept, a new validator's too (its rounds 0 of 5). A stranger that has awaited a
    head for more than FIRST_HEAD_S gives way, oldest first; one whose head has arrived does not."""
    from audionet.lib.miner.guard import FIRST_HEAD_S

    guard, clock, connect = guard_with({"new": 0.01})
    churn = iter(range(10**6))
    every = 0.256 / SETTINGS.unverified_budget  # as fast, for this budget, as 1,000 a second for the default 256

    def run(seconds: float) -> None:
        for _ in range(round(seconds / every)):
            clock.now += every
            i = next(churn)
            connect(f"10.{1 + i // 62500 % 250}.{i // 250 % 250}.{1 + i % 250}")

    run(1.0)
    assert len(guard.strangers) == SETTINGS.unverified_budget
    round_ = [connect("192.0.2.7") for _ in range(3)]  # a new validator's round: each has a place
    assert all(round_)
    run(FIRST_HEAD_S / 2)
    round_[0].send_head()  # the heads of two arrive at once (one is a health check, handled by the app)
    round_[1].send_head(body=False)
    run(0.3)  # past FIRST_HEAD_S, and as long as the churn takes to come round to them (the budget's 0.256 s)
    assert not round_[0].closed and not round_[1].closed and round_[2].closed  # the third never spoke: gone
    assert guard.verified(round_[1], "new") and round_[0].owner == "new"  # its first signature brings the rest
    run(2 * SETTINGS.grace_s)
    assert not round_[0].closed  # no longer a stranger newcomers push out (its body may keep coming)
    assert connect("192.0.2.7").owner == "new"  # and its next round's connections are its own from the start


def test_a_body_below_the_minimum_rate_idles_and_a_head_only_connection_too():
    guard, clock, connect = guard_with()
    trickle = connect("10.0.0.1").send_head()
    clock.now += SETTINGS.grace_s + 1.0
    trickle.progress.add(1000, clock.now)  # a byte a moment ago, but 1 KB in 3 s: below 100 KB/s past the grace
    assert trickle.idles(clock.now)
    head_only = connect("10.0.0.2").send_head()
    clock.now += SETTINGS.grace_s
    assert head_only.idles(clock.now)
    handled = connect("10.0.0.3").send_head(body=False)
    clock.now += 100
    assert not handled.idles(clock.now)  # the app has its request: never pushed out


def test_an_address_that_floods_takes_no_ones_place_and_gives_way_even_while_progressing():
    """Issue 24's flood: head-only connections from 250 addresses, reopened as soon as closed. Its addresses
    flood, so their newcomers take no idle place, and a validator's newcomer takes even a progressing one."""
    guard, clock, connect = guard_with()
    for _ in range(40):
        for i in range(8):
            conn = connect(f"127.1.0.{1 + i}")
            if conn:
                conn.send_head()
    assert guard.arrivals.floods("127.1.0.1") and len(guard.strangers) == 20
    clock.now += SETTINGS.grace_s  # every one of them idles now
    assert connect("127.1.0.1") is None  # a flooding address takes no one's place
    validator = connect("127.0.0.1")
    assert validator is not None and not guard.arrivals.floods("127.0.0.1")
    clock.now -= SETTINGS.grace_s  # (none idles)
    assert connect("127.0.0.2") is not None  # still takes the place of one from a flooding address


def test_a_verified_caller_holds_its_share_of_connections_and_its_idle_ones_give_way():
    """Hole 1: a validator with little stake verified 540 connections and kept them busy. A caller holds at
    most its share of the cap (here 1 % of 100 -> the floor of 4); past it, its idle ones give way, and a newly
    verified connection beyond it, with none idle, is refused."""
    guard, clock, connect = guard_with({"low": 0.01, "top": 0.99})
    low = [connect(f"10.0.0.{i}").send_head(body=False) for i in range(1, 6)]
    assert [guard.verified(c, "low") for c in low] == [True] * 4 + [False]  # all four busy: the fifth refused
    guard.left(low[4])
    low[0].progress.begin("head", clock.now)  # answered, kept alive: idle between requests
    again = connect("10.0.0.6").send_head(body=False)
    assert guard.verified(again, "low") and low[0].closed and guard.held()["low"] == 4
    for i in range(1, 51):  # one by one, each proving itself before the next (as callers do)
        assert guard.verified(connect(f"10.1.0.{i}").send_head(body=False), "top")
    assert guard.held()["top"] == 50 and guard.limit("top") == 99


def test_a_verified_callers_address_brings_its_next_connections_in_as_its_own():
    """A validator whose signature verified from an address: its next connections from there are its own from
    the start (TCP proves the address), so no flood of strangers can take their places."""
    guard, clock, connect = guard_with({"top": 0.9})
    first = connect("10.0.0.1").send_head(body=False)
    assert guard.verified(first, "top")
    for i in range(200):
        connect(f"10.2.{i // 250}.{1 + i % 250}")
    clock.now += SETTINGS.grace_s
    next_round = [connect("10.0.0.1") for _ in range(3)]
    assert all(c is not None and c.owner == "top" and not c.verified for c in next_round)
    assert all(c not in guard.strangers for c in next_round) and guard.held()["top"] == 4


def test_addresses_are_counted_per_ipv6_64_and_ipv4_mapped_as_ipv4():
    """Hole 8: an attacker with a /64 held 64 connections from each of its addresses."""
    assert address_group("2001:db8:1:2:aaaa::1") == address_group("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_group("::ffff:10.0.0.1") == "10.0.0.1" and address_group("unix") == "unix"
    guard, clock, connect = guard_with()
    held = [connect(f"2001:db8:1:2::{i:x}") for i in range(1, 20)]
    assert sum(c is not None for c in held) == SETTINGS.max_unverified_per_ip


def test_body_deadlines_scale_with_the_declared_size_and_the_settings_are_checked():
    assert SETTINGS.body_deadline_s(2_000_000) == pytest.approx(2.0 + 20.0)  # no fixed cap: a slow 2 MB finishes
    with pytest.raises(ConfigError, match="--miner.max_unverified 600 must be 1 to --miner.max_connections 512"):
        GuardSettings(max_unverified=600)


def test_a_lighter_address_takes_a_place_from_one_holding_more_than_a_round():
    """Issue 24's case without any idling yet: one address holds the budget; a newcomer from another takes the
    place of its oldest, but no address gives up the round's worth it holds."""
    guard, clock, connect = guard_with()
    heavy = [connect("10.0.0.1") for _ in range(8)] + [connect(f"10.0.1.{i}") for i in range(1, 13)]
    assert all(heavy) and len(guard.strangers) == 20
    assert connect("10.0.2.1") is not None and heavy[0].closed  # 8 > 4 and 8 >= 0 + 2
    for i in range(2, 6):
        connect(f"10.0.2.{i}")
    assert sum(c.closed for c in heavy[:8]) == 4  # down to a round's worth: no more taken from it
    assert connect("10.0.3.1") is None


def test_at_the_cap_a_higher_stake_callers_newcomer_displaces_the_lowest_stake_callers_busy_connection():
    settings = GuardSettings(max_connections=8, max_unverified=4)
    guard, clock, connect = guard_with({"low": 0.01, "top": 0.99}, settings)
    low = [connect(f"10.0.0.{i}").send_head(body=False) for i in range(1, 5)]
    assert all(guard.verified(c, "low") for c in low)  # busy, handled by the app: none idles
    top = connect("10.1.0.1").send_head(body=False)
    assert guard.verified(top, "top")
    busy = [connect(f"10.2.0.{i}").send_head(body=False) for i in range(1, 4)]  # strangers being handled
    assert all(busy) and len(guard.live) == 8
    assert connect("10.3.0.1") is None  # a stranger at the cap with nothing idle: turned away
    again = connect("10.1.0.1")  # the top validator's address: its own connection from the start
    assert again is not None and again.owner == "top" and low[0].closed and guard.held()["low"] == 3


def test_the_miner_builds_the_settings_from_its_flags_and_a_bad_one_is_one_line():
    from audionet.neurons.miner import build_parser

    args = build_parser().parse_args(["--netuid", "1", "--miner.idle_grace", "1.5", "--miner.min_upload_rate", "5e4"])
    settings = GuardSettings.from_flags(args)
    assert (settings.grace_s, settings.min_upload_rate, settings.unverified_budget) == (1.5, 50_000.0, 256)
    bad = build_parser().parse_args(["--netuid", "1", "--miner.idle_grace", "0"])
    with pytest.raises(ConfigError, match="must be above 0") as info:
        GuardSettings.from_flags(bad)
    assert "\n" not in str(info.value)
