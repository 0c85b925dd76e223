"""The start-up guard for the one broken torch pair: torchaudio beside a CPU-only torch build.

PyPI's torchaudio 2.11.0 is a CUDA 13 build on torch's stable ABI: beside PyPI's torch 2.13.0 (itself the CUDA 13
build, which runs on a CPU too) it loads on any host; beside a CPU-only torch (a `+cpu` wheel from PyTorch's own
index or a local folder) its import raises OSError for libc10_cuda.so. transformers' `is_torchaudio_available()`
is True there, so every audio processor that imports torchaudio fails with that OSError deep inside transformers.
Each entry point asks first and stops with one line that names the pair and the fix (constraints.txt).
"""

from __future__ import annotations

import ast
import importlib.util
from importlib import metadata
from pathlib import Path
from typing import Optional

from audionet.lib.core.errors import MissingDependency
from audionet.lib.core.requirements import CONSTRAINTS

GPU_FIELDS = ("cuda", "hip", "xpu")  # torch.version fields that name the accelerator a build is for


def torch_build() -> dict[str, Optional[str]]:
    """torch.version's accelerator fields (None each on a CPU-only build), read from the installed
    torch/version.py without importing torch (seconds an entry point need not spend); {} without torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    found: dict[str, Optional[str]] = dict.fromkeys(GPU_FIELDS)
    for node in ast.parse(path.read_text()).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id in found and node.value is not None:
            found[target.id] = ast.literal_eval(node.value)
    return found


def torch_pair_problem() -> Optional[str]:
    """One line naming the pair when torchaudio is installed but cannot load beside this torch, else None.
    Imports torchaudio (and so torch) only beside a CPU-only torch build."""
    build = torch_build()
    if not build or any(build.values()) or importlib.util.find_spec("torchaudio") is None:
        return None
    try:
        import torchaudio  # noqa: F401
    except OSError as error:
        reason = str(error).splitlines()[0][:160]
        return (
            f"torchaudio {metadata.version('torchaudio')} cannot load beside torch {metadata.version('torch')}, "
            f"a CPU-only build ({reason}): install PyPI's torch (pip install {CONSTRAINTS} torch) or uninstall "
            "torchaudio"
        )
    return None


def check_torch_pair() -> None:
    """Raise the one-line MissingDependency of `torch_pair_problem`, if any."""
    problem = torch_pair_problem()
    if problem:
        raise MissingDependency(problem)
