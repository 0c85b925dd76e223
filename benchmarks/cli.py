"""`audionet-bench <study> [flags]`: every benchmark and study behind one command (`--help` after a study
lists its flags). Each study is one module with `main(argv, prog)`; it writes its results with
`benchmarks/common/results.py` under `<out>/<device-slug>/`, the command that regenerates them at the top."""

from __future__ import annotations

import importlib
import os
import sys

from audionet.lib.core.errors import EXIT_MISSING
from audionet.lib.core.torch_build import torch_pair_problem

# name -> (module, what it measures)
STUDIES: dict[str, tuple[str, str]] = {
    "device-tables": (
        "audionet.benchmarks.device_tables.main",
        "per device and service: generation and evaluation time, quality, presets, parallel requests",
    ),
    "pool": ("audionet.benchmarks.pool.main", "the miner's device pool over two or more devices: dispatch per burst"),
    "aggregate": (
        "audionet.benchmarks.aggregate",
        "merge `device-tables` results of several devices into one comparison",
    ),
    "generation": ("audionet.benchmarks.generation.main", "real-time factor of every generation backend"),
    "evaluators": (
        "audionet.benchmarks.evaluators.main",
        "evaluation cost: each evaluator, and each evaluation profile",
    ),
    "clone-similarity": ("audionet.benchmarks.clone_similarity", "how close each voice-clone path gets to a voice"),
    "adversaries": ("audionet.benchmarks.adversaries.main", "cheap and gaming miners against the validator's Judge"),
    "attacks": (
        "audionet.benchmarks.attacks.main",
        "white-box gradient attacks (PGD, EOT-PGD) on the validator's Judge, undefended and defended",
    ),
    "naturalness-student": (
        "audionet.benchmarks.attacks.student",
        "train the naturalness student (the judge that caps DistillMOS) and report how far attacks move it",
    ),
    "judges": ("audionet.benchmarks.judges.main", "what the evaluation profile tells apart, on real speech and music"),
    "incentive": ("audionet.benchmarks.incentive.main", "which answers-to-weights curve pays for quality on a subnet"),
    "validator-scale": (
        "audionet.benchmarks.validator_scale.main",
        "one validator round over N loopback miners: time per stage, memory",
    ),
    "evaluator-devices": (
        "audionet.benchmarks.evaluator_devices.main",
        "the validator's evaluators on two or more devices: each alone, round-robin, earliest-finish dispatch",
    ),
    "wire": ("audionet.benchmarks.wire", "bytes and codec time of a response: binary FLAC vs JSON"),
    "gpu-check": ("audionet.benchmarks.gpu_check.main", "on a GPU host: the GPU matrix in one budgeted run"),
}
PROG = "audionet-bench"
OLD_NAMES = {"services": "device-tables"}  # renamed studies: the old name works for a release, with a warning


def usage() -> str:
    width = max(map(len, STUDIES))
    lines = [f"usage: {PROG} <study> [flags]   ({PROG} <study> --help for its flags)", "", "studies:"]
    return "\n".join(lines + [f"  {name:<{width}}  {what}" for name, (_, what) in STUDIES.items()])


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name in OLD_NAMES:
        print(f"{PROG}: warning: the study {name!r} is now {OLD_NAMES[name]!r}", file=sys.stderr)
        name = OLD_NAMES[name]
    if name not in STUDIES:
        print(f"{PROG}: unknown study {name!r}; one of: {', '.join(STUDIES)}", file=sys.stderr)
        return 2
    problem = torch_pair_problem()
    if problem:
        print(f"{PROG} {name}: {problem}", file=sys.stderr)
        return EXIT_MISSING
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # every study runs from local models unless told otherwise
    return importlib.import_module(STUDIES[name][0]).main(rest, prog=f"{PROG} {name}")
