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
    add_random_weight_flags(parser, old=())


def add_random_weight_flags(parser, old: tuple[str, ...]) -> None:
    """--cache-dir (`old`: its earlier spellings) and --random-size for the random-weight stand-ins."""
    from audionet.models.random_weights import SIZES  # light: the builders import their packages when called

    flag(parser, "cache-dir", old=old, default=RANDOM_WEIGHTS, help="where random-weight models are built once")
    flag(
        parser,
        "random-size",
        choices=list(SIZES),
        default="full",
        help="random-weight stand-ins: full (the published sizes, for timing) or tiny (the tests' few small "
        "layers: a rehearsal of the code path on a CPU, its times mean nothing)",
    )


def weighted_specs(specs: dict[str, str], args, device: str = "cpu", weights: str | None = None) -> dict[str, str]:
    """`specs` as --weights (or `weights`) asks: unchanged for pretrained; for random, each known checkpoint
    becomes its architecture with random weights at --random-size (timing only), in the format of the engine
    that runs it on `device`."""
    if (weights or args.weights) == "pretrained":
        return specs
    from audionet.models.random_weights import random_specs

    return random_specs(specs, args.cache_dir, args.random_size, device)


def one_line_errors(prog: str, call: Callable[[], int]) -> int:
    """`call()`; a configuration or backend error is one line on stderr and exit 2 (3: a missing package)."""
    try:
        return call()
    except (ConfigError, BackendError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return exit_code(error)
