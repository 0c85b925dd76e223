"""Reliability figures: hostile requests, load, idle connections, a round with bad miners, kill -9.

    python -m audionet.benchmarks.reliability --out benchmarks/results

The same scenario functions run with small sizes in tests/benchmarks/test_reliability.py."""
