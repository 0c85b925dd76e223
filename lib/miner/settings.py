"""The miner's command line, defined once: the entry point (`neurons/miner.py`), its self-check (`neurons/check.py`,
which adds its own flags to these) and the tests that start miners all parse with this parser."""

from __future__ import annotations

import argparse

from audionet.lib.core.config import Parser, add_common_flags, flag, positive_int
from audionet.lib.core.telemetry import add_telemetry_flags
from audionet.lib.miner.limits import add_connection_flags
from audionet.lib.miner.pool.settings import add_pool_flags
from audionet.lib.services import registry

DESCRIPTION = "audionet miner: serves every registered service (/v1/tts, /v1/vc, /v1/music) over signed HTTP."


def build_parser(prog: str = "audionet-miner", description: str = DESCRIPTION) -> argparse.ArgumentParser:
    """Every flag the miner serves with; `audionet-miner check` and the localnet build their command lines with it."""
    parser = Parser(prog=prog, description=description)
    add_common_flags(parser)
    axon = parser.add_argument_group("axon (HTTP server)")
    flag(axon, "axon.ip", default="0.0.0.0", help="address to bind")
    flag(axon, "axon.port", type=int, default=8091, help="port to bind")
    flag(
        axon,
        "axon.external_ip",
        default=None,
        help="address published on chain (default: --axon.ip unless it is 0.0.0.0)",
    )
    flag(axon, "axon.external_port", type=int, default=None, help="port published on chain (default: --axon.port)")
    flag(axon, "axon.no_publish", action="store_true", help="do not publish the endpoint on chain at start")
    registry.add_backend_flags(parser)
    models = parser.add_argument_group("serving")
    flag(
        models,
        "services",
        type=registry.service_list,
        default=",".join(registry.names()),
        help="comma-separated services to serve",
    )
    add_pool_flags(parser)
    policy = parser.add_argument_group("access policy and load")
    flag(policy, "miner.min_stake", type=float, default=0.0, help="minimum caller stake")
    flag(policy, "miner.allow_no_permit", action="store_true", help="accept callers without a validator permit")
    flag(policy, "miner.rate_limit", type=positive_int, default=120, help="requests per minute per caller hotkey")
    flag(policy, "miner.max_waiting", type=int, default=8, help="requests allowed to wait per service (then 503)")
    flag(policy, "miner.sync_interval", type=float, default=60.0, help="seconds between metagraph syncs")
    registry.add_timeout_flags(
        policy,
        "miner.timeout",
        "{title}: seconds one generation may take, then it is abandoned (503) and its slot freed",
    )
    add_connection_flags(parser)
    add_telemetry_flags(parser)
    return parser
