"""/v1/health: liveness for anyone, paced per address; the details for a signed GET (the app verifies the caller:
the miner's own hotkey or a caller the access policy admits), paced per caller, with the services this miner
serves (validators ask it for those only) and every place held by caller and stage."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import HealthDetails
from audionet.lib.miner.addresses import address_group
from audionet.lib.miner.guard import ConnectionGuard
from audionet.lib.miner.pacing import Pacers
from audionet.lib.miner.pool import Pool

# (rate per second, burst, longest wait before a 429). Unsigned, per address (IPv6: per /64): a flood from some
# addresses makes no other wait. Signed, per caller once its signature verifies: a budget no unsigned flood spends.
PUBLIC_HEALTH = (2.0, 4, 5.0)
SIGNED_HEALTH = (5.0, 10, 5.0)


class Health:
    def __init__(
        self,
        hotkey: str,
        started_ns: int,
        pool: Pool,
        guard: ConnectionGuard,
        share: Callable[[str], float],
        served: Mapping[str, int],
    ):
        """`share`: a caller's share of the stake (the one the guard holds places by); `served`: answers per
        service so far (the app counts them)."""
        self.hotkey, self.started_ns, self.pool, self.guard = hotkey, started_ns, pool, guard
        self.share, self.served = share, served
        self.public, self.signed = Pacers(*PUBLIC_HEALTH), Pacers(*SIGNED_HEALTH)

    async def liveness(self, http: Request) -> Response:
        """All an unsigned caller learns: that the miner is up."""
        group = address_group(http.client.host) if http.client else "?"
        if not await self.public.turn(group):
            raise WireError("too many health requests from this address; try again later", status=429)
        return JSONResponse({"status": "ok"})

    async def answer(self, caller: str) -> bytes:
        """The details for `caller`, whose signature verified, as the JSON body to sign back to it."""
        if not await self.signed.turn(caller):
            raise WireError("too many health requests from this caller; try again later", status=429)
        return self.details().model_dump_json().encode()

    def details(self) -> HealthDetails:
        """What /v1/health tells a signed caller: the hotkey, when this process started (ns since the epoch;
        a request signed before it is refused), per service its model, queue, served count and replicas;
        per device busy, waiting, served, failed and abandoned; and every place held, by caller and stage."""
        details = {
            "status": "ok",
            "hotkey": self.hotkey,
            "started_ns": self.started_ns,
            "services": {s: self._service(s) for s in self.served},
            "devices": devices(self.pool),
            "places": self.places(),
        }
        return HealthDetails.model_validate(details)  # the answer's schema (lib/core/protocol.py)

    def _service(self, name: str) -> dict:
        dispatcher = self.pool.dispatchers[name]
        return {
            "model": dispatcher.replicas[0].model_id,
            "busy": dispatcher.busy,
            "waiting": dispatcher.waiting,
            "replicas": dispatcher.describe(),
            "served": self.served[name],
        }

    def places(self) -> dict:
        """Every place held: per verified caller its share of the stake and what it holds by stage (connections;
        parsing, waiting and generating over every service), and the strangers' connections."""
        lines, connections = held(self.pool), self.guard.held()
        callers = {
            hotkey: {"share": round(self.share(hotkey), 6), "connections": connections.get(hotkey, 0)}
            | lines.get(hotkey, {"parsing": 0, "waiting": 0, "generating": 0})
            for hotkey in sorted(set(lines) | set(connections))
        }
        strangers = self.guard.strangers
        return {
            "callers": callers,
            "unverified": {"connections": len(strangers), "addresses": len(self.guard.by_group)},
            "limits": {
                "connections": self.guard.settings.max_connections,
                "unverified": self.guard.settings.unverified_budget,
                "line": {s: self.pool.places(s) for s in self.served},
            },
        }


def held(pool: Pool) -> dict[str, dict[str, int]]:
    """Per caller, the places it holds in every line by stage (parsing, waiting, generating)."""
    out: dict[str, dict[str, int]] = {}
    for dispatcher in pool.dispatchers.values():
        for hotkey, stages in dispatcher.line.held().items():
            row = out.setdefault(hotkey, dict.fromkeys(stages, 0))
            for stage, count in stages.items():
                row[stage] += count
    return out


def devices(pool: Pool) -> dict[str, dict]:
    """Per device label, over every service: busy, waiting (planned there), served, failed, abandoned, refused."""
    counts = ("busy", "waiting", "served", "failed", "abandoned", "refused")
    out: dict[str, dict] = {}
    for state in (row for dispatcher in pool.dispatchers.values() for row in dispatcher.describe()):
        row = out.setdefault(state["label"], {"device": state["device"]} | dict.fromkeys(counts, 0))
        for key in counts:
            row[key] += state[key]
    return out
