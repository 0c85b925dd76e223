"""Administer an offline chain by hand (what btcli does on a real network).

    python scripts/offline_chain.py --chain dev.sqlite register --wallet.name v --stake 1000 --permit --create
    python scripts/offline_chain.py --chain dev.sqlite register --wallet.name m1 --create
    python scripts/offline_chain.py --chain dev.sqlite show

Then start neurons with `--subtensor.network offline:dev.sqlite --netuid 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.config import DEFAULT_WALLET_PATH, Parser, flag
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.wallet import create_wallet, load_wallet


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="offline_chain", description=__doc__.split("\n")[0])
    parser.add_argument("--chain", required=True, help="SQLite file (created if missing)")
    parser.add_argument("--netuid", type=int, default=1)
    parser.add_argument("--block-seconds", type=float, default=12.0, help="block time when creating the chain")
    commands = parser.add_subparsers(dest="command", required=True)
    register = commands.add_parser("register", help="register a wallet's hotkey (idempotent; updates stake/permit)")
    flag(register, "wallet.name", required=True)
    flag(register, "wallet.hotkey", default="default")
    flag(register, "wallet.path", default=DEFAULT_WALLET_PATH)
    register.add_argument("--stake", type=float, default=0.0)
    register.add_argument("--permit", action="store_true", help="give a validator permit")
    register.add_argument("--create", action="store_true", help="create the wallet (no password) if missing")
    commands.add_parser("show", help="print neurons, endpoints and weights")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    chain = OfflineChain(args.chain, args.netuid, block_seconds=args.block_seconds)
    if args.command == "register":
        make = create_wallet if args.create else load_wallet
        try:
            wallet = make(args.wallet_name, args.wallet_hotkey, args.wallet_path)
        except ConfigError as error:
            print(f"error: {error} (pass --create to make it)", file=sys.stderr)
            return 2
        uid = chain.register(
            wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address, stake=args.stake, validator_permit=args.permit
        )
        print(f"uid {uid}: {wallet.hotkey.ss58_address} stake {args.stake:g} permit {args.permit}")
        return 0
    metagraph = asyncio.run(chain.metagraph())
    print(f"netuid {metagraph.netuid}, block {metagraph.block}, {len(metagraph)} neurons")
    for n in metagraph.neurons:
        weights = chain.weights(n.uid)
        shown = ", ".join(f"{uid}:{w:.3f}" for uid, w in weights.items()) or "-"
        print(
            f"{n.uid:>4} {n.hotkey} stake {n.total_stake.tao:>8g} permit {int(n.validator_permit)} "
            f"axon {n.axon or '-':>21} weights {shown}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
