"""Command-line flags in the bittensor style (`--wallet.name`, `--axon.port`, ...).

Dotted flags land on the namespace with dots turned into underscores
(`--wallet.name` -> `args.wallet_name`).
"""
from __future__ import annotations

import argparse
import logging
import os

DEFAULT_WALLET_PATH = os.path.expanduser("~/.bittensor/wallets")


def flag(parser: argparse.ArgumentParser | argparse._ArgumentGroup, name: str, **kwargs) -> None:
    parser.add_argument(f"--{name}", dest=name.replace(".", "_").replace("-", "_"), **kwargs)


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("chain and wallet")
    flag(group, "netuid", type=int, required=True, help="subnet uid")
    flag(group, "subtensor.network", default="finney",
         help="finney | test | local | ws(s)://host:port | offline:<sqlite file> (localnet)")
    flag(group, "wallet.name", default="default", help="coldkey wallet name")
    flag(group, "wallet.hotkey", default="default", help="hotkey name inside the wallet")
    flag(group, "wallet.path", default=DEFAULT_WALLET_PATH, help="wallets directory")
    flag(group, "logging.level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def setup_logging(level: str, name: str) -> logging.Logger:
    logging.basicConfig(level=level, format=f"%(asctime)s {name} %(levelname)s %(message)s", datefmt="%H:%M:%S")
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logging.getLogger(name)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def run_entry_point(role: str, parser: argparse.ArgumentParser, run, argv=None) -> int:
    """Parse flags, set up logging, call `run(args, log)`; start-up problems
    (bad flags, wallet, chain, model) end as one logged line and exit code 2."""
    from lib.errors import BackendError, ConfigError

    args = parser.parse_args(argv)
    log = setup_logging(args.logging_level, role)
    try:
        return run(args, log)
    except (ConfigError, BackendError) as error:
        log.error("%s", error)
        return 2
