"""audionet validator: queries miners, scores their audio, sets weights.

    python neurons/validator.py --netuid 16 --subtensor.network finney \
        --wallet.name my_cold --wallet.hotkey my_validator_hot
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from audionet.lib.core.config import Parser, add_common_flags, flag, run_entry_point
from audionet.lib.core.telemetry import add_telemetry_flags
from audionet.lib.services import registry
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.settings import ValidatorSettings
from audionet.lib.validator.verdicts import add_verdict_flags


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="audionet-validator", description=__doc__.split("\n")[0])
    add_common_flags(parser)
    neuron = parser.add_argument_group("validator")
    flag(
        neuron,
        "neuron.state_dir",
        default=None,
        help="where state.json, summary.json and rounds.jsonl live (default ~/.audionet/<network>-<netuid>-<hotkey>)",
    )
    flag(
        neuron,
        "neuron.record_hours",
        type=float,
        default=CURVE.memory.record_s / 3600,
        help="hours in which the weight of a miner's answers in its record falls by e",
    )
    flag(
        neuron,
        "neuron.eligible_after",
        type=int,
        default=CURVE.eligible_after,
        help="scored answers in a service before a miner can earn weight in it (a local development net may use 1)",
    )
    flag(
        neuron,
        "neuron.ready_error",
        type=float,
        default=CURVE.ready_error,
        help="publish a service's weights once the typical miner's standard error is within this share of the "
        "reference (until then hold the last weights; inf: at once, for a local development net)",
    )
    flag(
        neuron,
        "neuron.mechanisms",
        type=mechanisms_flag,
        default="auto",
        help="service:mechanism,... (auto: one mechanism per service when the subnet runs enough, else all on 0)",
    )
    flag(
        neuron,
        "neuron.split",
        type=split_flag,
        default="",
        help="service:share,... of services that share a mechanism (default: even)",
    )
    flag(neuron, "neuron.rounds", type=int, default=0, help="stop after this many rounds (0 = run forever)")
    registry.add_services_flag(neuron, "neuron.services", "query")
    add_verdict_flags(neuron)
    ValidatorSettings.add_flags(parser, services=registry.all_services())
    add_telemetry_flags(parser)
    from audionet.models.eval.profiles import add_eval_flags

    add_eval_flags(parser)
    for service in registry.all_services():
        service.add_flags(parser)  # where each service's prompts come from (e.g. --vc.references)
    return parser


def mechanisms_flag(text: str):
    from audionet.lib.validator.mechanisms import parse_mechanisms

    try:
        return parse_mechanisms(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def split_flag(text: str) -> dict:
    from audionet.lib.validator.mechanisms import parse_split

    try:
        return parse_split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv=None) -> int:
    return run_entry_point("validator", build_parser(), run, argv)


def evaluator_specs(args) -> dict[str, str]:
    """The evaluation profile's specs for this network (`EvalSettings.validator_specs`: its policy)."""
    from audionet.models.eval.profiles import EvalSettings

    return EvalSettings.from_flags(args).validator_specs(args.subtensor_network)


def run(args, log) -> int:
    if args.neuron_record_hours <= 0 or args.neuron_eligible_after < 0 or not args.neuron_ready_error > 0:
        log.error("--neuron.record_hours and --neuron.ready_error must be above 0, --neuron.eligible_after at least 0")
        return 2
    validator, telemetry = open_validator(args, log)
    return serve(validator, telemetry, args.neuron_rounds)


def open_validator(args, log):
    """The validator the flags describe, and its telemetry (started): (Validator, Telemetry)."""
    specs = evaluator_specs(args)
    from dataclasses import replace

    from audionet.lib.core.chain import open_chain
    from audionet.lib.core.config import is_real_network, node_dir
    from audionet.lib.core.devices import describe
    from audionet.lib.core.telemetry import TelemetrySettings, lookup_uid, open_telemetry
    from audionet.lib.core.timing import Timer
    from audionet.lib.core.wallet import load_wallet
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.validator.loop import Validator
    from audionet.lib.validator.verdicts import VerdictLog

    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    state_dir = args.neuron_state_dir or node_dir(args.subtensor_network, args.netuid, args.wallet_hotkey)
    services = args.neuron_services
    settings = ValidatorSettings.from_flags(
        args,
        state_dir=state_dir,
        curve=replace(
            CURVE, eligible_after=args.neuron_eligible_after, ready_error=args.neuron_ready_error
        ).with_memory(record_s=args.neuron_record_hours * 3600),
        services=services,
        mechanisms=args.neuron_mechanisms,
        split=args.neuron_split,
    )
    device_info = describe()
    timer = Timer("validator", device=device_info.slug)
    real = is_real_network(args.subtensor_network)
    sources = registry.sources_from_flags(args, services, real_network=real)
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
    validator.on_verdicts = VerdictLog(telemetry, args.neuron_verdict_rows, args.neuron_wandb_audio)
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
