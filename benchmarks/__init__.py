"""Benchmarks: per-device service tables (run), their merge (aggregate) and focused studies."""

import os

# Results go under the working directory, never inside the installed package.
RESULTS_DIR = os.path.join("benchmarks", "results")
