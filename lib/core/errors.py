"""One typed error for everything that crosses the wire or a flag.

Its message is a single line meant for a person (no traceback, no payload
echo), and it carries the HTTP status the miner answers with.
"""

from __future__ import annotations


class WireError(ValueError):
    """Hostile or malformed input: limits, undecodable audio, bad fields. `spent`: refused only after generation
    work was done for it (a timeout, an answer past the length limit), so it counts toward the caller's rate
    limit; any other refusal is given back (`AccessPolicy.refund`)."""

    def __init__(self, message: str, status: int = 400, spent: bool = False):
        super().__init__(" ".join(str(message).split()))
        self.status, self.spent = status, spent

    @property
    def message(self) -> str:
        return str(self)


class BackendError(RuntimeError):
    """A generation backend could not be loaded or failed on a request."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class ConfigError(RuntimeError):
    """A flag, wallet or chain that cannot be used as given (start-up only)."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


class MissingDependency(BackendError):
    """A package or native library that a chosen model or step needs is not installed: one line naming
    it and what installs it (lib/core/requirements.py for packages, lib/core/cuda_libs.py for CUDA libraries)."""


# The exit code of an entry point stopped by a MissingDependency: gpu-check reports such a step as skipped.
EXIT_MISSING = 3


def exit_code(error: BackendError | ConfigError) -> int:
    """2 for a start-up problem; EXIT_MISSING when what is missing is an installable dependency."""
    return EXIT_MISSING if isinstance(error, MissingDependency) else 2
