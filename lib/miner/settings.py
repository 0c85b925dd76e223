"""The miner's settings and command line, each default stated once in a typed field (`lib.core.config.setting`):
the endpoint (`AxonSettings`), the services served (`ServingSettings`) and their backends
(`registry.BackendSettings`), the access policy and load (`MinerSettings`), the connection guard
(`limits.GuardSettings`) and the device pool (`pool.settings.PoolSettings`). The entry point (`neurons/miner.py`),
its self-check (`neurons/check.py`, which adds its own flags to these) and the tests that start miners all parse
with `build_parser`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import Parser, Settings, positive_int, setting
from audionet.lib.core.neuron import add_common_flags
from audionet.lib.core.telemetry_settings import add_telemetry_flags
from audionet.lib.miner.limits import GuardSettings
from audionet.lib.miner.pool.dispatcher import MAX_WAITING
from audionet.lib.miner.pool.settings import PoolSettings
from audionet.lib.services import registry

DESCRIPTION = "audionet miner: serves every registered service (/v1/tts, /v1/vc, /v1/music) over signed HTTP."


@dataclass(frozen=True)
class AxonSettings(Settings):
    """axon (HTTP server)"""

    ip: str = setting("axon.ip", "0.0.0.0", help="address to bind")
    port: int = setting("axon.port", 8091, type=int, help="port to bind")
    external_ip: Optional[str] = setting(
        "axon.external_ip", None, help="address published on chain (default: --axon.ip unless it is 0.0.0.0)"
    )
    external_port: Optional[int] = setting(
        "axon.external_port", None, type=int, help="port published on chain (default: --axon.port)"
    )
    no_publish: bool = setting(
        "axon.no_publish", False, action="store_true", help="do not publish the endpoint on chain at start"
    )

    @property
    def published_ip(self) -> Optional[str]:
        """The address validators reach: --axon.external_ip, else --axon.ip unless it binds every address."""
        return self.external_ip or (None if self.ip == "0.0.0.0" else self.ip)

    @property
    def published_port(self) -> int:
        return self.external_port or self.port


@dataclass(frozen=True)
class MinerSettings(Settings):
    """access policy and load"""

    min_stake: float = setting("miner.min_stake", 0.0, type=float, help="minimum caller stake")
    allow_no_permit: bool = setting(
        "miner.allow_no_permit", False, action="store_true", help="accept callers without a validator permit"
    )
    rate_limit: int = setting("miner.rate_limit", 120, type=positive_int, help="requests per minute per caller hotkey")
    max_waiting: int = setting(
        "miner.max_waiting", MAX_WAITING, type=int, help="requests allowed to wait per service (then 503)"
    )
    sync_interval: float = setting("miner.sync_interval", 60.0, type=float, help="seconds between metagraph syncs")
    timeouts: dict = setting(
        "miner.timeout",
        per_service="timeout_s",
        type=float,
        help="{title}: seconds one generation may take, then it is abandoned (503) and its slot freed",
    )


@dataclass(frozen=True)
class ServingSettings(Settings):
    """serving"""

    services: tuple[str, ...] = setting(
        "services", default_factory=registry.names, type=registry.service_list, help="comma-separated services to serve"
    )


def build_parser(prog: str = "audionet-miner", description: str = DESCRIPTION) -> argparse.ArgumentParser:
    """Every flag the miner serves with; `audionet-miner check` builds its command line on it."""
    parser = Parser(prog=prog, description=description)
    add_common_flags(parser)
    AxonSettings.add_flags(parser)
    registry.BackendSettings.add_flags(parser, services=registry.all_services())
    ServingSettings.add_flags(parser)
    PoolSettings.add_flags(parser, services=registry.all_services())
    MinerSettings.add_flags(parser, services=registry.all_services())
    GuardSettings.add_flags(parser)
    add_telemetry_flags(parser)
    return parser
