"""Administer an offline chain by hand (what btcli does on a real network).

    python scripts/offline_chain.py --chain dev.sqlite register --wallet.name v --stake 1000 --permit --create
    python scripts/offline_chain.py --chain dev.sqlite register --wallet.name m1 --create
    python scripts/offline_chain.py --chain dev.sqlite mechanisms --count 2 --split 21845,43690
    python scripts/offline_chain.py --chain dev.sqlite rules --max-uids 85 --max-mechanisms 3
    python scripts/offline_chain.py --chain dev.sqlite show

The chain refuses what subtensor refuses (MaxMechanismCount 2 by default, max_uids x mechanisms <= 256, the
weights rate limit) and keeps committed weights hidden for commit-reveal's period; `rules` changes what the
subnet owner or root may change (tempo, rate limit, reveal period, max_uids, MaxMechanismCount).

Then start neurons with `--subtensor.network offline:dev.sqlite --netuid 1`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.config import Parser
from audionet.lib.core.errors import ConfigError
from audionet.lib.core.neuron import WalletSettings
from audionet.lib.core.subnet_rules import RULE_FLAGS
from audionet.lib.core.wallet import create_wallet, load_wallet


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="offline_chain", description=__doc__.split("\n")[0])
    parser.add_argument("--chain", required=True, help="SQLite file (created if missing)")
    parser.add_argument("--netuid", type=int, default=1)
    parser.add_argument("--block-seconds", type=float, default=12.0, help="block time when creating the chain")
    commands = parser.add_subparsers(dest="command", required=True)
    register = commands.add_parser("register", help="register a wallet's hotkey (idempotent; updates stake/permit)")
    WalletSettings.add_flags(register)  # the neurons' wallet flags
    register.add_argument("--stake", type=float, default=0.0)
    register.add_argument("--permit", action="store_true", help="give a validator permit")
    register.add_argument("--create", action="store_true", help="create the wallet (no password) if missing")
    mechanisms = commands.add_parser(
        "mechanisms", help="set the mechanism count and emission split (what the subnet owner does on chain)"
    )
    mechanisms.add_argument("--count", type=int, default=None, help="mechanisms the subnet runs (resets the split)")
    mechanisms.add_argument(
        "--split", default=None, help="comma-separated u16 shares summing to 65535, one per mechanism ('even': none)"
    )
    rules = commands.add_parser("rules", help="change the subnet's hyperparameters (what its owner or root does)")
    for name, help_text in RULE_FLAGS.items():
        rules.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=None, help=help_text)
    commands.add_parser("show", help="print neurons, endpoints, weights per mechanism and shares of emission")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    chain = OfflineChain(args.chain, args.netuid, block_seconds=args.block_seconds)
    if args.command == "register":
        make = create_wallet if args.create else load_wallet
        try:
            named = WalletSettings.from_flags(args)
            wallet = make(named.name, named.hotkey, named.path)
        except ConfigError as error:
            print(f"error: {error} (pass --create to make it)", file=sys.stderr)
            return 2
        uid = chain.register(
            wallet.hotkey.ss58_address, wallet.coldkeypub.ss58_address, stake=args.stake, validator_permit=args.permit
        )
        print(f"uid {uid}: {wallet.hotkey.ss58_address} stake {args.stake:g} permit {args.permit}")
        return 0
    try:
        if args.command == "mechanisms":
            if args.count is not None:
                chain.set_mechanism_count(args.count)
            if args.split is not None:
                chain.set_emission_split(None if args.split == "even" else [int(x) for x in args.split.split(",")])
        if args.command == "rules":
            chain.set_rules(**{name: getattr(args, name) for name in RULE_FLAGS if getattr(args, name) is not None})
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    metagraph = asyncio.run(chain.metagraph())
    mechanisms = asyncio.run(chain.mechanisms())
    shares = ", ".join(f"{m}: {share:.3f}" for m, share in enumerate(mechanisms.shares))
    print(f"netuid {metagraph.netuid}, block {metagraph.block}, {len(metagraph)} neurons; mechanisms {shares}")
    print(f"rules: {chain.rules.describe()}; commits not revealed yet: {chain.pending()}")
    emission = chain.emission()
    for n in metagraph.neurons:
        per_mechanism = []
        for mechid in range(mechanisms.count):
            weights = chain.weights(n.uid, mechid)
            if weights:
                per_mechanism.append(f"[{mechid}] " + ", ".join(f"{uid}:{w:.3f}" for uid, w in weights.items()))
        print(
            f"{n.uid:>4} {n.hotkey} stake {n.total_stake.tao:>8g} permit {int(n.validator_permit)} "
            f"axon {n.axon or '-':>21} emission {emission.get(n.uid, 0.0):.3f} weights {' '.join(per_mechanism) or '-'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
