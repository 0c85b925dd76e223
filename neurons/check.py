"""audionet-miner check: would this miner earn? It is reached as a validator would reach it, one line a finding.

    audionet-miner check <the miner's own flags> [--check.answers 5] [--check.reference.tts kokoro:]
                         [--eval.profile standard]

Exit status 0: ready (registered, reachable, and at least one service would earn); 1: not (the FAIL lines say
why); 2: bad flags, wallet, chain or evaluation models.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from audionet.lib.core.neuron import run_entry_point
from audionet.lib.miner.settings import AxonSettings, ServingSettings
from audionet.lib.miner.settings import build_parser as miner_parser
from audionet.lib.services import registry


def build_parser() -> argparse.ArgumentParser:
    from audionet.lib.validator.check import CheckSettings
    from audionet.models.eval.profiles import add_eval_flags

    # the miner's own flags: a check runs with the command line it serves with
    parser = miner_parser(prog="audionet-miner check", description=__doc__.split("\n")[0])
    CheckSettings.add_flags(parser, services=registry.all_services())
    add_eval_flags(parser)
    for service in registry.all_services():
        service.add_flags(parser)  # where the validator's prompts come from (e.g. --vc.references)
    return parser


def main(argv=None) -> int:
    return run_entry_point("check", build_parser(), run, argv)


def run(args, log) -> int:
    from audionet.lib.core.chain import open_chain
    from audionet.lib.core.neuron import is_real_network
    from audionet.lib.core.wallet import load_wallet
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.validator.check import CheckSettings, run_check
    from audionet.lib.validator.check_verdict import earning, ready
    from audionet.neurons.validator import evaluator_specs

    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    axon = AxonSettings.from_flags(args)
    listen = f"{axon.external_ip or axon.ip}:{axon.published_port}"
    settings = CheckSettings.from_flags(args, hotkey=wallet.hotkey.ss58_address, listen=listen)
    judge = Judge.load(evaluator_specs(args), devices=args.eval_devices)
    served = ServingSettings.from_flags(args).services
    sources = registry.sources_from_flags(args, served, real_network=is_real_network(args.subtensor_network))
    log.info("checking %s as a validator would; evaluators: %s", settings.listen, judge.evaluators.describe())
    findings = asyncio.run(run_check(chain, wallet, settings, judge, sources))
    for finding in findings:
        print(finding, flush=True)
    paid = earning(registry.names(), findings)
    if ready(findings):
        print(f"READY: a validator would pay for {', '.join(paid)}")
        return 0
    print("NOT READY: " + ("see the FAIL lines" if paid else "no service would earn; see the FAIL lines"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
