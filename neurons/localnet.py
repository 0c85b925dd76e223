"""A whole subnet on loopback: offline chain, one validator, N miner processes.

audionet-localnet --miners 3 --rounds 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile

from audionet.lib.core.config import Parser, flag, positive_int, setup_logging
from audionet.lib.core.errors import EXIT_MISSING
from audionet.lib.core.subnet_rules import RuleError
from audionet.lib.core.torch_build import torch_pair_problem
from audionet.lib.localnet import LocalNet, roster_models
from audionet.lib.services import registry
from audionet.neurons import localnet_report


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="audionet-localnet", description=__doc__.split("\n")[0])
    parser.add_argument("--miners", type=positive_int, default=3, help="miner processes to start")
    parser.add_argument(
        "--rounds", type=positive_int, default=5, help="validator rounds to run (5: enough to tell the roster apart)"
    )
    parser.add_argument(
        "--json", dest="json_path", default=None, help="also write the results table here, and <name>.html beside it"
    )
    parser.add_argument("--workdir", default=None, help="keep chain, wallets, logs and state here (default: temp)")
    parser.add_argument(
        "--mechanisms",
        type=positive_int,
        default=1,
        help="incentive mechanisms the offline subnet runs (1, as a default 256-uid subnet: the validator combines "
        "the services by its split; 2: music on its own, max_uids 128)",
    )
    flag(
        parser,
        "neuron.eligible_after",
        old=("eligible-after",),
        type=positive_int,
        default=1,
        help="scored rounds before a miner can earn (the validator's default is for a real network)",
    )
    registry.add_backend_flags(parser, roster=True, presets=False)  # the roster's backends unless overridden
    parser.add_argument("--seed", type=int, default=None, help="validator prompt seed")
    return parser


def _interrupt(_signum, _frame) -> None:
    """SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so the children are stopped."""
    raise KeyboardInterrupt


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    log = setup_logging("INFO", "localnet")
    problem = torch_pair_problem()
    if problem:  # every miner and the validator would stop on it: say it once, before starting them
        log.error("%s", problem)
        return EXIT_MISSING
    workdir = args.workdir or tempfile.mkdtemp(prefix="audionet-localnet-")
    overrides = registry.backend_specs(args, registry.names())
    try:
        net = LocalNet(workdir, miner_count=args.miners, mechanisms=args.mechanisms)
    except RuleError as error:
        log.error("--mechanisms %d: %s", args.mechanisms, error)
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
        return 2
    log.info("offline subnet: %s", net.layout())
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        net.add_validator()
        for index in range(args.miners):
            label, models = roster_models(index, overrides)
            net.add_miner(f"miner{index}", models=models, label=label)
        net.wait_ready()
        validator_args = [
            "--neuron.eligible_after",
            str(args.neuron_eligible_after),
            "--neuron.save_audio",
            os.path.join(workdir, "audio"),
        ]
        if args.seed is not None:
            validator_args += ["--neuron.seed", str(args.seed)]
        code = net.run_validator(args.rounds, extra_args=validator_args)
        if code != 0:
            log.error("validator exited with %d; logs in %s", code, net.logs_dir)
            return 1
        report = net.report()
    except KeyboardInterrupt:
        log.error("interrupted; stopping every process started; logs in %s", net.logs_dir)
        return 130
    except (RuntimeError, TimeoutError) as error:
        log.error("%s (logs in %s)", error, net.logs_dir)
        return 1
    finally:
        net.stop()
    net.print_table(report)
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(report, handle, indent=2)
        page = localnet_report.write(
            os.path.splitext(args.json_path)[0] + ".html", report, net.round_records(), os.path.join(workdir, "audio")
        )
        log.info(
            "wrote %s and %s (open it in a browser: weights by round, every clip and its verdict)", args.json_path, page
        )
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        log.info("chain, wallets, logs and validator state kept in %s", workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
