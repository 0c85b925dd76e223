"""One gpu-check step in its own process: `python -m audionet.benchmarks.gpu_check.step <study> [flags]` runs
`audionet-bench <study> [flags]`. A package it needs that is not installed (a ModuleNotFoundError that
reaches here, or a MissingDependency) ends it with one line naming the package and its requirement and
exit code 3 (lib/core/errors.EXIT_MISSING): gpu-check reports the step as skipped, with that line as the reason.
It ends itself when gpu-check ends (`follow_parent`).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from audionet.lib.core.errors import EXIT_MISSING, MissingDependency
from audionet.lib.core.requirements import is_missing_package, missing

EXIT_ORPHANED = 143  # as a SIGTERM'd process: gpu-check is gone, nobody reads it


def follow_parent(poll_s: float = 0.5) -> None:
    """End this step when gpu-check ends: the step runs in its own process group (so gpu-check can kill it
    on time), which a killed gpu-check's group does not reach; a device call cut at its limit would otherwise
    leave it running on the GPU into the next call."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(EXIT_ORPHANED)

    threading.Thread(target=watch, name="follow-gpu-check", daemon=True).start()


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
    follow_parent()
    sys.exit(main(sys.argv[1:]))
