"""One typed error for everything that crosses the wire or a flag, and the one sanitiser for text from it.

Its message is a single line meant for a person (no traceback, no payload
echo), and it carries the HTTP status the miner answers with. A wire error's message goes through
`clean_line`, as does every other string from the wire before it reaches a log line or a verdict.
"""

from __future__ import annotations

MAX_MESSAGE_CHARS = 500  # a wire error's message at most (the longest of ours is about 200)


def clean_line(text: object, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` as one line safe to log: every character Python does not count as printable (control
    characters such as ESC and CR, line and paragraph separators, bidirectional overrides, unassigned code
    points) becomes a space, runs of whitespace become one space, and it is cut to `limit` characters
    (ending in "..." when cut). Nothing a miner sends can start a log line of its own or move the cursor."""
    raw = str(text)[: 4 * limit + 16]  # bound the work before any of it
    line = " ".join("".join(ch if ch.isprintable() else " " for ch in raw).split())
    return line if len(line) <= limit else line[: max(0, limit - 3)] + "..."


class WireError(ValueError):
    """Hostile or malformed input: limits, undecodable audio, bad fields. `spent`: refused only after generation
    work was done for it (a timeout, an answer past the length limit), so it counts toward the caller's rate
    limit; any other refusal is given back (`AccessPolicy.refund`)."""

    def __init__(self, message: str, status: int = 400, spent: bool = False):
        super().__init__(clean_line(message))
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
