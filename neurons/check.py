"""audionet-miner check: is this miner ready? It is reached as a validator would reach it, one line a finding.

    audionet-miner check <the miner's own flags> [--check.answers 5] [--eval.profile standard]

Exit status 0: ready (nothing failed); 1: something a validator would score 0 (the FAIL lines say what);
2: bad flags, wallet, chain or evaluation models.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from audionet.lib.core.config import flag, positive_int, run_entry_point
from audionet.lib.miner.settings import AxonSettings
from audionet.lib.miner.settings import build_parser as miner_parser
from audionet.lib.services import registry


def build_parser() -> argparse.ArgumentParser:
    from audionet.models.eval.profiles import add_eval_flags

    # the miner's own flags: a check runs with the command line it serves with
    parser = miner_parser(prog="audionet-miner check", description=__doc__.split("\n")[0])
    group = parser.add_argument_group("self-check")
    flag(group, "check.answers", type=positive_int, default=5, help="prompts each service answers")
    flag(group, "check.seed", type=int, default=None, help="seed for the prompts (default: fresh randomness)")
    registry.add_timeout_flags(group, "check.timeout", "{title}: the validator's timeout to hold answers to, s")
    add_eval_flags(parser)
    for service in registry.all_services():
        service.add_flags(parser)  # where the validator's prompts come from (e.g. --vc.references)
    return parser


def main(argv=None) -> int:
    return run_entry_point("check", build_parser(), run, argv)


def run(args, log) -> int:
    from audionet.lib.core.chain import open_chain
    from audionet.lib.core.config import is_real_network
    from audionet.lib.core.wallet import load_wallet
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.validator.check import CheckSettings, ready, run_check
    from audionet.neurons.validator import evaluator_specs

    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    axon = AxonSettings.from_flags(args)
    settings = CheckSettings(
        hotkey=wallet.hotkey.ss58_address,
        listen=f"{axon.external_ip or axon.ip}:{axon.published_port}",
        answers=args.check_answers,
        timeouts={s: getattr(args, f"check_timeout_{s}") for s in registry.names()},
        seed=args.check_seed,
    )
    judge = Judge.load(evaluator_specs(args), devices=args.eval_devices)
    sources = registry.sources_from_flags(args, args.services, real_network=is_real_network(args.subtensor_network))
    log.info("checking %s as a validator would; evaluators: %s", settings.listen, judge.evaluators.describe())
    findings = asyncio.run(run_check(chain, wallet, settings, judge, sources))
    for finding in findings:
        print(finding, flush=True)
    verdict = ready(findings)
    print("READY: a validator can score every service it serves" if verdict else "NOT READY: see the FAIL lines")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
