"""The flags of the stress suite (`python -m tests.stress --help`): which scenarios, and each one's size."""

from __future__ import annotations

from audionet.benchmarks.common.results import RESULTS_DIR
from audionet.lib.core.config import Parser
from tests.stress import answers

SCENARIOS = (
    "hostile",
    "concurrent",
    "idle",
    "floods",
    "generation",
    "round",
    "crash",
    "holes",
    "memory",
    "soak",
    "answers",
)


def build_parser() -> Parser:
    parser = Parser(prog="python -m tests.stress", description="Run the reliability scenarios at full size")
    parser.add_argument("--out", default=RESULTS_DIR, help="results folder: <out>/<device-slug>/reliability.{json,md}")
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), help="comma-separated subset of " + ",".join(SCENARIOS)
    )
    parser.add_argument("--hostile", type=int, default=10_000, help="generated hostile requests")
    parser.add_argument("--concurrent", type=int, default=200, help="valid signed requests sent at once")
    parser.add_argument("--waves", type=int, default=3, help="bursts of --concurrent requests (RSS after each)")
    parser.add_argument("--idle", type=int, default=1_000, help="idle or slow connections held open")
    parser.add_argument("--lockout", type=int, default=2_000, help="head-only connections held and refilled")
    parser.add_argument("--probes", type=int, default=20, help="signed TTS requests timed during the head-only flood")
    parser.add_argument("--miners", type=int, default=64, help="miners in the validator round")
    parser.add_argument("--honest", type=int, default=4, help="of which real baseline miners")
    parser.add_argument("--save-kills", type=int, default=50, help="kill -9 of a validator mid-save, times")
    holes_ = parser.add_argument_group("issue 37 (holes)")
    holes_.add_argument("--rounds", type=int, default=20, help="the top validator's full rounds under each attack")
    holes_.add_argument("--hog", type=int, default=540, help="a low-stake validator's verified connections")
    holes_.add_argument("--streams", type=int, default=16, help="streams of refused CJK texts")
    holes_.add_argument("--partial", type=int, default=300, help="addresses holding one partial head each")
    holes_.add_argument("--churn-rate", type=float, default=1000.0, help="connections a second from fresh addresses")
    holes_.add_argument("--health", type=int, default=200, help="addresses pipelining unsigned /v1/health")
    holes_.add_argument("--burst", type=int, default=200, help="the top validator's requests at once, one address")
    holes_.add_argument("--first-contact", type=int, default=60, help="new low-stake validators under the churn")
    holes_.add_argument("--seeds", type=int, default=5, help="seeds per voice for a text at the limit")
    holes_.add_argument("--memory", type=int, default=10_000, help="signed TTS requests while RSS is sampled")
    soak_ = parser.add_argument_group("issue 34 (the validator's memory)")
    soak_.add_argument("--soak-rounds", type=int, default=1_000, help="validator rounds back to back")
    soak_.add_argument("--soak-every", type=int, default=25, help="rounds between memory samples")
    soak_.add_argument("--soak-warmup", type=int, default=200, help="rounds before growth is counted")
    answers_ = parser.add_argument_group("issue 45 (a validator over hostile answers)")
    answers_.add_argument("--answer-rounds", type=int, default=4, help="validator rounds in each phase")
    answers_.add_argument("--bombs", type=int, default=answers.FULL["bombs"], help="miners sending bombs")
    answers_.add_argument("--compressed", type=int, default=answers.FULL["compressed"], help="gzip-answer miners")
    answers_.add_argument("--fat-health", type=int, default=answers.FULL["fat_health"], help="fat-health miners")
    answers_.add_argument("--phases", default="", help="comma-separated phases of answers.py (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the other scenarios of the results file there")
    return parser


HOLE_SIZES = ("hog", "streams", "partial", "churn_rate", "health", "burst", "first_contact", "seeds")


def hole_sizes(args) -> dict:
    return {name: getattr(args, name) for name in HOLE_SIZES}
