"""One gpu-check step in its own process: `python -m audionet.benchmarks.gpu_check.step <study> [flags]` runs
`audionet-bench <study> [flags]`. A package it needs that is not installed (a ModuleNotFoundError that
reaches here, or a MissingDependency) ends it with one line naming the package and its requirement and
exit code 3 (lib/errors.EXIT_MISSING): gpu-check reports the step as skipped, with that line as the reason.
"""

from __future__ import annotations

import sys

from audionet.lib.core.errors import EXIT_MISSING, MissingDependency
from audionet.lib.core.requirements import is_missing_package, missing


def main(argv: list[str]) -> int:
    from audionet.benchmarks.cli import main as bench

    study = argv[0] if argv else ""
    try:
        return bench(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except ModuleNotFoundError as error:
        if not is_missing_package(error):
            raise  # a module of this project that does not exist: a failure, not a skip
        print(f"{study}: {missing(error.name, 'this step')}", file=sys.stderr)
        return EXIT_MISSING
    except MissingDependency as error:
        print(f"{study}: {error}", file=sys.stderr)
        return EXIT_MISSING


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
