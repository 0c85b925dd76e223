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
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import Parser, Settings, positive_int, setting
from audionet.lib.core.errors import EXIT_MISSING
from audionet.lib.core.neuron import setup_logging
from audionet.lib.core.subnet_rules import RuleError
from audionet.lib.core.torch_build import torch_pair_problem
from audionet.lib.localnet import LocalNet, roster_models
from audionet.lib.services import registry
from audionet.neurons import localnet_report


@dataclass(frozen=True)
class LocalnetSettings(Settings):
    """the local subnet"""

    miners: int = setting("miners", 3, type=positive_int, help="miner processes to start")
    rounds: int = setting(
        "rounds", 5, type=positive_int, help="validator rounds to run (5: enough to tell the roster apart)"
    )
    json_path: Optional[str] = setting(
        "json", None, help="also write the results table here, and <name>.html beside it"
    )
    workdir: Optional[str] = setting("workdir", None, help="keep chain, wallets, logs and state here (default: temp)")
    mechanisms: int = setting(
        "mechanisms",
        1,
        type=positive_int,
        help="incentive mechanisms the offline subnet runs (1, as a default 256-uid subnet: the validator combines "
        "the services by its split; 2: music on its own, max_uids 128)",
    )
    eligible_after: int = setting(
        "neuron.eligible_after",
        1,
        old=("eligible-after",),
        type=positive_int,
        help="scored rounds before a miner can earn (the validator's default is for a real network)",
    )
    seed: Optional[int] = setting("seed", None, type=int, help="validator prompt seed")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="audionet-localnet", description=__doc__.split("\n")[0])
    LocalnetSettings.add_flags(parser)
    # the roster's backends unless overridden; no presets (each miner keeps its default)
    registry.BackendSettings.add_flags(
        parser,
        services=registry.all_services(),
        skip=("presets",),
        models=None,
        shown={"models": "by the miner's place in the roster"},
    )
    return parser


def _interrupt(_signum, _frame) -> None:
    """SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C, so the children are stopped."""
    raise KeyboardInterrupt


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    settings = LocalnetSettings.from_flags(args)
    log = setup_logging("INFO", "localnet")
    problem = torch_pair_problem()
    if problem:  # every miner and the validator would stop on it: say it once, before starting them
        log.error("%s", problem)
        return EXIT_MISSING
    workdir = settings.workdir or tempfile.mkdtemp(prefix="audionet-localnet-")
    overrides = registry.BackendSettings.from_flags(args).specs(registry.names())
    try:
        net = LocalNet(workdir, miner_count=settings.miners, mechanisms=settings.mechanisms)
    except RuleError as error:
        log.error("--mechanisms %d: %s", settings.mechanisms, error)
        if settings.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
        return 2
    log.info("offline subnet: %s", net.layout())
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        net.add_validator()
        for index in range(settings.miners):
            label, models = roster_models(index, overrides)
            net.add_miner(f"miner{index}", models=models, label=label)
        net.wait_ready()
        validator_args = [
            "--neuron.eligible_after",
            str(settings.eligible_after),
            "--neuron.save_audio",
            os.path.join(workdir, "audio"),
        ]
        if settings.seed is not None:
            validator_args += ["--neuron.seed", str(settings.seed)]
        code = net.run_validator(settings.rounds, extra_args=validator_args)
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
    if settings.json_path:
        with open(settings.json_path, "w") as handle:
            json.dump(report, handle, indent=2)
        page = localnet_report.write(
            os.path.splitext(settings.json_path)[0] + ".html",
            report,
            net.round_records(),
            os.path.join(workdir, "audio"),
        )
        log.info(
            "wrote %s and %s (open it in a browser: weights by round, every clip and its verdict)",
            settings.json_path,
            page,
        )
    if settings.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        log.info("chain, wallets, logs and validator state kept in %s", workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
