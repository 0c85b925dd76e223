"""The command line the studies share, spelled once: a study's parser (its description and --out), the
services it runs with the flags their prompts need, random weights, and a configuration or backend error as
one line on stderr."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from audionet.benchmarks.common.results import RESULTS_DIR
from audionet.lib.core.config import Parser, flag
from audionet.lib.core.errors import BackendError, ConfigError, exit_code

RANDOM_WEIGHTS = os.path.expanduser("~/.cache/audionet/random-weights")


def study_parser(prog: str, doc: str, where: str = "<out>/<device-slug>/") -> Parser:
    """The study's parser: the first line of its module docstring as description, and --out."""
    parser = Parser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument("--out", default=RESULTS_DIR, help=f"results root: files go to {where}")
    return parser


def add_service_flags(parser) -> None:
    """--services, --seed, and each service's prompt flags (e.g. VC references): prompts are drawn as the
    validator draws them."""
    from audionet.lib.services import registry  # imported here: gpu-check's parser loads no service

    names = ",".join(registry.names())
    parser.add_argument(
        "--services", type=registry.service_list, default=names, help=f"comma-separated subset of {names}"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for prompts and generation")
    for service in registry.all_services():
        service.add_flags(parser)


def add_weights_flags(parser) -> None:
    parser.add_argument(
        "--weights",
        choices=["pretrained", "random"],
        default="pretrained",
        help="random: same full-size architectures with random weights (timing only)",
    )
    flag(parser, "cache-dir", default=RANDOM_WEIGHTS, help="where --weights random builds its models")


def one_line_errors(prog: str, call: Callable[[], int]) -> int:
    """`call()`; a configuration or backend error is one line on stderr and exit 2 (3: a missing package)."""
    try:
        return call()
    except (ConfigError, BackendError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return exit_code(error)
