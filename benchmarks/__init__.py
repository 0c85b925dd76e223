"""Benchmarks and studies, one command: `audionet-bench <study>` (benchmarks/cli.py)."""

from audionet.benchmarks.common.results import RESULTS_DIR

__all__ = ["RESULTS_DIR"]
