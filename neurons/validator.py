"""audionet validator: queries miners, scores their audio, sets weights.

    python neurons/validator.py --netuid 16 --subtensor.network finney \
        --wallet.name my_cold --wallet.hotkey my_validator_hot
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace

from audionet.lib.core.config import Parser
from audionet.lib.core.neuron import add_common_flags, run_entry_point
from audionet.lib.core.telemetry_settings import add_telemetry_flags
from audionet.lib.services import registry
from audionet.lib.validator.settings import ValidatorSettings
from audionet.lib.validator.verdicts import VerdictLog


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="audionet-validator", description=__doc__.split("\n")[0])
    add_common_flags(parser)
    ValidatorSettings.add_flags(parser, services=registry.all_services())
    VerdictLog.add_flags(parser, "verdicts on W&B")
    add_telemetry_flags(parser)
    from audionet.models.eval.profiles import add_eval_flags

    add_eval_flags(parser)
    for service in registry.all_services():
        service.add_flags(parser)  # where each service's prompts come from (e.g. --vc.references)
    return parser


def main(argv=None) -> int:
    return run_entry_point("validator", build_parser(), run, argv)


def evaluator_specs(args) -> dict[str, str]:
    """The evaluation profile's specs for this network (`EvalSettings.validator_specs`: its policy)."""
    from audionet.models.eval.profiles import EvalSettings

    return EvalSettings.from_flags(args).validator_specs(args.subtensor_network)


def run(args, log) -> int:
    validator, telemetry = open_validator(args, log)
    return serve(validator, telemetry, validator.settings.rounds)


def open_validator(args, log):
    """The validator the flags describe, and its telemetry (started): (Validator, Telemetry)."""
    settings = ValidatorSettings.from_flags(args)  # checks the flags before anything loads
    specs = evaluator_specs(args)
    from audionet.lib.core.chain import open_chain
    from audionet.lib.core.devices import describe
    from audionet.lib.core.neuron import is_real_network, node_dir
    from audionet.lib.core.telemetry import lookup_uid, open_telemetry
    from audionet.lib.core.telemetry_settings import TelemetrySettings
    from audionet.lib.core.timing import Timer
    from audionet.lib.core.wallet import load_wallet
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.validator.loop import Validator

    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    state_dir = settings.state_dir or node_dir(args.subtensor_network, args.netuid, args.wallet_hotkey)
    settings = replace(settings, state_dir=state_dir)
    device_info = describe()
    timer = Timer("validator", device=device_info.slug)
    real = is_real_network(args.subtensor_network)
    sources = registry.sources_from_flags(args, settings.services, real_network=real)
    judge = Judge.load(specs, devices=args.eval_devices)
    log.info("evaluators on %s: %s", ", ".join(judge.replicas.labels), judge.evaluators.describe())
    validator = Validator(wallet, chain, settings, sources, judge=judge, timer=timer)
    log.info("hotkey %s, state in %s", validator.hotkey, state_dir)
    telemetry_settings = TelemetrySettings.from_flags(args)
    telemetry = open_telemetry(
        telemetry_settings,
        timer,
        role="validator",
        hotkey=validator.hotkey,
        uid=asyncio.run(lookup_uid(chain, validator.hotkey)),
        device=device_info.as_dict(),
        netuid=args.netuid,
        network=args.subtensor_network,
        default_dir=state_dir,
        sources=(validator.network,),
    )
    telemetry.start(telemetry_settings.interval_s)
    validator.on_verdicts = VerdictLog.from_flags(args, telemetry=telemetry)
    return validator, telemetry


def serve(validator, telemetry, rounds: int) -> int:
    """Run `rounds` rounds (0: until interrupted), then write the last timing record and finish W&B."""
    try:
        asyncio.run(validator.run(rounds))
    except KeyboardInterrupt:
        pass
    finally:
        telemetry.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
