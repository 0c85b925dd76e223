"""/v1/health: liveness for anyone, paced per address; the details for a signed GET (the miner's own hotkey or a
caller the access policy admits), paced per caller and signed back to it, with the services this miner serves
(validators ask it for those only) and every place held by caller and stage."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from audionet.lib.core.auth import claimed_hotkey, sign_response, verify_request
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import HEALTH_PATH
from audionet.lib.miner.addresses import address_group
from audionet.lib.miner.pacing import Pacers

if TYPE_CHECKING:
    from audionet.lib.miner.app import MinerApp


def request_target(request: Request) -> str:
    """The path and query string exactly as sent: what btauth/1 signs."""
    target = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    return (target + b"?" + query if query else target).decode("latin-1")


# (rate per second, burst, longest wait before a 429). Unsigned, per address (IPv6: per /64): a flood from some
# addresses makes no other wait. Signed, per caller once its signature verifies: a budget no unsigned flood spends.
PUBLIC_HEALTH = (2.0, 4, 5.0)
SIGNED_HEALTH = (5.0, 10, 5.0)


class Health:
    def __init__(self, miner: MinerApp):
        self.miner = miner
        self.public, self.signed = Pacers(*PUBLIC_HEALTH), Pacers(*SIGNED_HEALTH)

    async def answer(self, http: Request) -> Response:
        miner = self.miner
        claimed = claimed_hotkey(http.headers)
        if not claimed:  # liveness, all an unsigned caller learns
            group = address_group(http.client.host) if http.client else "?"
            if not await self.public.turn(group):
                raise WireError("too many health requests from this address; try again later", status=429)
            return JSONResponse({"status": "ok"})
        if claimed != miner.hotkey:
            miner.policy.screen(http.headers)
        caller = verify_request(http.headers, b"", request_target(http), miner.hotkey, miner.nonces, method="GET")
        if caller != miner.hotkey:
            miner.policy.member(caller)
        miner.claim_connection(http, caller)
        if not await self.signed.turn(caller):
            raise WireError("too many health requests from this caller; try again later", status=429)
        body = json.dumps(self.details()).encode()
        headers = sign_response(miner.wallet, HEALTH_PATH, body, caller)
        return Response(body, media_type="application/json", headers=headers)

    def details(self) -> dict:
        """What /v1/health tells a signed caller: the hotkey, when this process started (ns since the epoch;
        a request signed before it is refused), per service its model, queue, served count and replicas;
        per device busy, waiting, served, failed and abandoned; and every place held, by caller and stage."""
        return {
            "status": "ok",
            "hotkey": self.miner.hotkey,
            "started_ns": self.miner.nonces.started_ns,
            "services": {
                s: {
                    "model": self.miner.pool.model(s),
                    "busy": self.miner.pool.dispatchers[s].busy,
                    "waiting": self.miner.pool.dispatchers[s].waiting,
                    "served": self.miner.served[s],
                    "replicas": self.miner.pool.dispatchers[s].describe(),
                }
                for s in self.miner.services
            },
            "devices": self.miner.pool.devices(),
            "places": self.places(),
        }

    def places(self) -> dict:
        """Every place held: per verified caller its share of the stake and what it holds by stage (connections;
        parsing, waiting and generating over every service), and the strangers' connections."""
        lines, connections = self.miner.pool.held(), self.miner.guard.held()
        callers = {
            hotkey: {"share": round(self.miner.share(hotkey), 6), "connections": connections.get(hotkey, 0)}
            | lines.get(hotkey, {"parsing": 0, "waiting": 0, "generating": 0})
            for hotkey in sorted(set(lines) | set(connections))
        }
        strangers = self.miner.guard.strangers
        return {
            "callers": callers,
            "unverified": {"connections": len(strangers), "addresses": len(self.miner.guard.by_group)},
            "limits": {
                "connections": self.miner.guard.settings.max_connections,
                "unverified": self.miner.guard.settings.unverified_budget,
                "line": {s: self.miner.pool.dispatchers[s].places for s in self.miner.services},
            },
        }
