"""What every neuron (miner, validator, check) shares at start: the chain and wallet flags (`ChainSettings`,
`WalletSettings`), which networks are real money, the state folder's name, the log's format, and the entry point
that ends a start-up problem as one line.
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import Settings, setting

DEFAULT_WALLET_PATH = os.path.expanduser("~/.bittensor/wallets")


@dataclass(frozen=True)
class ChainSettings(Settings):
    """chain"""

    netuid: Optional[int] = setting("netuid", None, type=int, required=True, help="subnet uid")
    network: str = setting(
        "subtensor.network",
        "finney",
        help="finney | test | local | ws(s)://host:port | offline:<sqlite file> (localnet)",
    )
    logging_level: str = setting(
        "logging.level", "INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="log level"
    )


@dataclass(frozen=True)
class WalletSettings(Settings):
    """wallet"""

    name: str = setting("wallet.name", "default", help="coldkey wallet name")
    hotkey: str = setting("wallet.hotkey", "default", help="hotkey name inside the wallet")
    path: str = setting("wallet.path", DEFAULT_WALLET_PATH, help="wallets directory")


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    """The chain and wallet flags every neuron takes (`ChainSettings`, `WalletSettings`)."""
    ChainSettings.add_flags(parser)
    WalletSettings.add_flags(parser)


def is_real_network(network: str) -> bool:
    """Anything but an offline chain file (finney, test, local, a ws:// endpoint): real money."""
    return not network.startswith("offline:")


def network_slug(network: str) -> str:
    """`offline:<path>` -> offline; a ws:// URL -> a file-name-safe slug."""
    name = "offline" if network.startswith("offline:") else network
    return name.replace("/", "_").replace(":", "_")


def node_dir(network: str, netuid: int, hotkey_name: str, role: str = "") -> str:
    """The one state-folder naming rule: ~/.audionet/[<role>-]<network>-<netuid>-<hotkey name>.
    (The validator's folder has no role prefix: existing validators keep their state.)"""
    prefix = f"{role}-" if role else ""
    return os.path.expanduser(f"~/.audionet/{prefix}{network_slug(network)}-{netuid}-{hotkey_name}")


def setup_logging(level: str, name: str) -> logging.Logger:
    logging.basicConfig(level=level, format=f"%(asctime)s {name} %(levelname)s %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logging.getLogger(name)


def run_entry_point(role: str, parser: argparse.ArgumentParser, run, argv=None) -> int:
    """Parse flags, set up logging, call `run(args, log)`; start-up problems
    (bad flags, wallet, chain, model) end as one logged line and exit code 2 (3: a package or library
    to install, lib/core/errors.EXIT_MISSING)."""
    from audionet.lib.core.errors import BackendError, ConfigError, exit_code
    from audionet.lib.core.torch_build import check_torch_pair

    args = parser.parse_args(argv)
    log = setup_logging(args.logging_level, role)
    try:
        check_torch_pair()
        return run(args, log)
    except (ConfigError, BackendError) as error:
        log.error("%s", error)
        return exit_code(error)
