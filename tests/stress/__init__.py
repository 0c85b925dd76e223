"""The stress suite: hostile requests, load, idle and head-only connections, a round with bad miners, kill -9.
Not a benchmark (it asserts thresholds) and not installed (it needs the dev-only hypothesis).

    python -m tests.stress          # full size: benchmarks/results/<device-slug>/reliability.{json,md}
    make stress                     # the same

tests/stress/test_stress.py runs the same scenario functions at small sizes."""
