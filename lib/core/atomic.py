"""Files written whole or not at all: a temporary file beside the target, flushed and synced, then renamed over
it (a kill at any moment leaves the old file or the new one, never half of one)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any


@contextmanager
def atomic_file(path: str, mode: str = "w", suffix: str = "") -> Iterator[IO[Any]]:
    """Yields a handle open in `mode` ("w" or "wb"); on leaving the block the file replaces `path`, and the
    folder's entry is synced too. An exception leaves `path` as it was and no temporary file behind."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
