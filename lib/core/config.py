"""Command-line flags in the bittensor style (`--wallet.name`, `--axon.port`, ...).

Dotted flags land on the namespace with dots turned into underscores
(`--wallet.name` -> `args.wallet_name`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

DEFAULT_WALLET_PATH = os.path.expanduser("~/.bittensor/wallets")


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors ("prog: error: ... (see --help)"), for every entry point."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class OldSpelling(argparse.Action):
    """A flag's previous spelling, kept for one release: it sets the same value, with one warning line."""

    def __init__(self, option_strings, dest, *, spelling: str, **kwargs):
        self.spelling = spelling
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.spelling}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, name: str, *, old: tuple[str, ...] = (), **kwargs
) -> None:
    """`--name` (dots and dashes become underscores in `args`); `old` spellings of a valued flag still work,
    each with a deprecation warning."""
    dest = name.replace(".", "_").replace("-", "_")
    parser.add_argument(f"--{name}", dest=dest, **kwargs)
    if old:
        parser.add_argument(
            *(f"--{spelling}" for spelling in old),
            dest=dest,
            action=OldSpelling,
            spelling=f"--{name}",
            type=kwargs.get("type"),
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("chain and wallet")
    flag(group, "netuid", type=int, required=True, help="subnet uid")
    flag(
        group,
        "subtensor.network",
        default="finney",
        help="finney | test | local | ws(s)://host:port | offline:<sqlite file> (localnet)",
    )
    flag(group, "wallet.name", default="default", help="coldkey wallet name")
    flag(group, "wallet.hotkey", default="default", help="hotkey name inside the wallet")
    flag(group, "wallet.path", default=DEFAULT_WALLET_PATH, help="wallets directory")
    flag(group, "logging.level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


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


def split_list(text: str) -> list[str]:
    """ "a, b,,a" -> ["a", "b", "a"]: the one splitter of comma lists (flags, device lists, spec lists)."""
    return [part.strip() for part in str(text).split(",") if part.strip()]


class CommaList:
    """argparse type for comma-separated values: "a, b,a" -> ("a", "b") (order kept, repeats dropped
    unless `repeats`: one count per device keeps them).

    `allowed` (a collection, or a callable returning one when the flag is parsed) limits the
    values; `convert` turns each one into its type (int for counts); `empty` accepts "".
    The one comma-list flag type: services, parallel counts, presets, TTS specs, slowdowns.
    """

    def __init__(self, allowed=None, *, convert=str, empty: bool = False, repeats: bool = False, what: str = "value"):
        self.allowed, self.convert, self.empty, self.repeats, self.what = allowed, convert, empty, repeats, what

    def __call__(self, text: str) -> tuple:
        items = tuple(split_list(text) if self.repeats else dict.fromkeys(split_list(text)))
        if not items and not self.empty:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {self.what}s, got {text!r}")
        allowed = self.allowed() if callable(self.allowed) else self.allowed
        unknown = [item for item in items if allowed is not None and item not in allowed]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {self.what} {', '.join(unknown)}; choose from {', '.join(allowed)}"
            )
        try:
            return tuple(self.convert(item) for item in items)
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {self.what}s") from None


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


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
