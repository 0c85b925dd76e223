"""btauth/1 both ways, and who may call a miner.

Requests are signed by the validator's hotkey for the miner's hotkey.
Responses are signed by the miner's hotkey for the validator under the
pseudo-method RESPONSE, so a signed response can never be replayed as a
request (the method is part of the signed payload).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

import bittensor as bt

from audionet.lib.core.errors import WireError

RESPONSE_METHOD = "RESPONSE"
_http_auth = bt.http_auth
# A signature's nonce may be this old, or this far ahead, when it is judged (btauth/1's defaults).
REPLAY_WINDOW_S = _http_auth.DEFAULT_MAX_AGE + _http_auth.DEFAULT_ALLOWED_SKEW


def sign_request(wallet, path: str, body: bytes, miner_hotkey: str, method: str = "POST") -> dict[str, str]:
    return _http_auth.sign(wallet, method=method, path=path, body=body, receiver_ss58=miner_hotkey)


def sign_response(wallet, path: str, body: bytes, validator_hotkey: str) -> dict[str, str]:
    return _http_auth.sign(wallet, method=RESPONSE_METHOD, path=path, body=body, receiver_ss58=validator_hotkey)


def request_target(request) -> str:
    """The path and query string of an HTTP request (a Starlette `Request`) exactly as sent: what btauth/1 signs."""
    target = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    return (target + b"?" + query if query else target).decode("latin-1")


class RestartSafeNonceStore(_http_auth.InMemoryNonceStore):
    """Replay protection that survives a restart: a nonce from before this process started is refused
    (the process before may have accepted it, and its memory is gone), so nothing needs persisting."""

    def __init__(self, retention: float = 60.0, started_ns: Optional[int] = None):
        super().__init__(retention)
        self.started_ns = time.time_ns() if started_ns is None else started_ns

    def check_and_store(self, hotkey_ss58: str, nonce_ns: int) -> bool:
        if nonce_ns < self.started_ns:
            raise WireError("authentication failed: the request was signed before this miner started", status=401)
        return super().check_and_store(hotkey_ss58, nonce_ns)


def _verify(
    headers: Mapping[str, str],
    body: bytes,
    *,
    method: str,
    path: str,
    self_hotkey: str,
    nonce_store,
    now_ns: Optional[int] = None,
) -> str:
    try:
        caller = _http_auth.verify(
            headers,
            body,
            method=method,
            path=path,
            self_hotkey_ss58=self_hotkey,
            nonce_store=nonce_store,
            now_ns=now_ns,
        )
    except _http_auth.AuthError as error:
        raise WireError(f"authentication failed ({type(error).__name__}): {error}", status=401) from None
    return caller.hotkey_ss58


def verify_request(
    headers: Mapping[str, str],
    body: bytes,
    path: str,
    self_hotkey: str,
    nonce_store,
    method: str = "POST",
    received_ns: Optional[int] = None,
) -> str:
    """The authenticated caller's hotkey, or WireError(401). `received_ns`: when the request's head arrived
    (default now), as for `verify_response`: a body on a slow link is bounded by its own deadline."""
    return _verify(
        headers, body, method=method, path=path, self_hotkey=self_hotkey, nonce_store=nonce_store, now_ns=received_ns
    )


def verify_response(
    headers: Mapping[str, str],
    body: bytes,
    path: str,
    *,
    miner_hotkey: str,
    self_hotkey: str,
    nonce_store,
    received_ns: Optional[int] = None,
) -> None:
    """Raise WireError(401) unless the response is signed by `miner_hotkey` for us. `received_ns`: when its
    headers arrived (default now): its nonce must be fresh then, so an answer on a slow link is judged by when it
    started to arrive (its body is bounded by the caller's timeout). Signature and replay checks are unchanged:
    the signature covers the whole body, and the nonce store must remember nonces for the freshness window plus
    the longest time from headers to this check."""
    signer = _verify(
        headers,
        body,
        method=RESPONSE_METHOD,
        path=path,
        self_hotkey=self_hotkey,
        nonce_store=nonce_store,
        now_ns=received_ns,
    )
    if signer != miner_hotkey:
        raise WireError("response was signed by a different hotkey than the miner's", status=401)


def claimed_hotkey(headers: Mapping[str, str]) -> Optional[str]:
    """The hotkey a request says it is signed by (not yet checked), if it names one."""
    return next((v for k, v in headers.items() if k.lower() == _http_auth.HEADER_HOTKEY.lower()), None)


@dataclass(frozen=True)
class Member:
    uid: int
    stake: float
    validator_permit: bool


def members_of(metagraph: bt.Metagraph) -> dict[str, Member]:
    return {n.hotkey: Member(n.uid, float(n.total_stake.tao), bool(n.validator_permit)) for n in metagraph.neurons}


@dataclass
class AccessPolicy:
    """Registered, permitted and staked callers only; a sliding-window rate limit per hotkey, and each caller's
    share of the stake of every caller admitted (what the miner's places follow)."""

    min_stake: float = 0.0
    require_permit: bool = True
    rate_limit: int = 120
    rate_window_s: float = 60.0
    members: dict[str, Member] = field(default_factory=dict)
    _recent: dict[str, deque] = field(default_factory=dict, repr=False)
    _refunded: dict[str, deque] = field(default_factory=dict, repr=False)
    _stake: tuple = field(default=(None, 0.0, 0), repr=False)  # (the members it totals, their stake, how many)

    def update(self, metagraph: bt.Metagraph) -> None:
        self.members = members_of(metagraph)
        # Forget callers that left the metagraph so the tables stay bounded.
        for table in (self._recent, self._refunded):
            for hotkey in list(table):
                if hotkey not in self.members:
                    del table[hotkey]

    def admissible(self, member: Member) -> bool:
        return (member.validator_permit or not self.require_permit) and member.stake >= self.min_stake

    def share(self, hotkey: str) -> float:
        """`hotkey`'s part of the stake of every caller this policy admits (the validators it competes with for
        the miner's places), 0..1; 0 for a caller it does not admit. With no stake at all, equal parts."""
        member = self.members.get(hotkey)
        if member is None or not self.admissible(member):
            return 0.0
        if self._stake[0] is not self.members:  # the members were replaced (a sync): total them once
            admitted = [m.stake for m in self.members.values() if self.admissible(m)]
            self._stake = (self.members, sum(admitted), len(admitted))
        _, total, count = self._stake
        return member.stake / total if total > 0 else 1.0 / count

    def screen(self, headers: Mapping[str, str]) -> None:
        """Before the body is read: refuse callers whose *claimed* hotkey could
        never be admitted, so strangers cannot make us read and hash bodies.
        The claim earns nothing else: it is only trusted after `verify_request`
        (the connection stays in the miner's budget for unverified ones)."""
        claimed = claimed_hotkey(headers)
        if not claimed:
            raise WireError(f"authentication failed: missing {_http_auth.HEADER_HOTKEY}", status=401)
        self.member(claimed)

    def member(self, hotkey: str) -> Member:
        """The caller's metagraph entry if it may call at all, else WireError(403)."""
        member = self.members.get(hotkey)
        if member is None:
            raise WireError("caller hotkey is not registered on this subnet", status=403)
        if self.require_permit and not member.validator_permit:
            raise WireError("caller has no validator permit", status=403)
        if member.stake < self.min_stake:
            raise WireError(f"caller stake {member.stake:g} is below the minimum {self.min_stake:g}", status=403)
        return member

    def admit(self, hotkey: str, now: Optional[float] = None) -> float:
        """The verified caller's priority (its stake), or WireError 403/429."""
        member = self.member(hotkey)
        now = time.monotonic() if now is None else now
        window = self._recent.setdefault(hotkey, deque())
        while window and window[0] <= now - self.rate_window_s:
            window.popleft()
        if len(window) >= self.rate_limit:
            raise WireError(f"rate limit: at most {self.rate_limit} requests per {self.rate_window_s:g} s", status=429)
        window.append(now)
        return member.stake

    def refund(self, hotkey: str, now: Optional[float] = None) -> bool:
        """Uncount the request `admit` counted last for `hotkey`: it was refused before any generation (400, 503),
        so only accepted requests count toward the rate limit. At most `rate_limit` refunds per window: past that,
        refused requests count too, so a stream of them (each one verified and parsed) is held to the limit.
        False when it was not refunded."""
        now = time.monotonic() if now is None else now
        window, refunded = self._recent.get(hotkey), self._refunded.setdefault(hotkey, deque())
        while refunded and refunded[0] <= now - self.rate_window_s:
            refunded.popleft()
        if not window or len(refunded) >= self.rate_limit:
            return False
        window.pop()
        refunded.append(now)
        return True
