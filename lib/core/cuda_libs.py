"""CUDA libraries that engines outside torch load: found, loaded by path, and checked in one line.

torch==2.13.0 from PyPI is a CUDA 13.0 build; its wheels put libcublas.so.13, libcudart.so.13,
libcudnn.so.9, ... under site-packages/nvidia/. Other engines load CUDA libraries of their own
(read from their wheels; docs/gpu-hosts.md has the table and the decision per path):

  CTranslate2 4.8 (faster-whisper)   dlopens libcublas.so.12 (which needs libcublasLt.so.12); its CUDA
                                     runtime is static, it loads no cuDNN
  onnxruntime-gpu 1.31.1             links libcublas(Lt).so.13, libcudart.so.13, libcurand.so.10,
                                     libcufft.so.12 and loads cuDNN 9: torch's CUDA 13 wheels

A library loads by its soname (the system loader: LD_LIBRARY_PATH, ldconfig) or else by path from the
NVIDIA wheel folder that ships it, with RTLD_GLOBAL: the engine's own dlopen of the soname then finds
it already loaded. What cannot load is a MissingDependency naming the library and what installs it.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.errors import MissingDependency
from audionet.lib.core.requirements import install_hint


@dataclass(frozen=True)
class CudaLibrary:
    soname: str
    folder: str  # where its wheel puts it, under site-packages
    distribution: str  # the wheel that ships it
    what: str  # for people


def _cublas12(soname: str) -> CudaLibrary:
    return CudaLibrary(soname, "nvidia/cublas/lib", "nvidia-cublas-cu12", "CUDA 12 cuBLAS")


def _cuda13(soname: str, what: str, folder: str = "nvidia/cu13/lib", distribution: str = "torch") -> CudaLibrary:
    return CudaLibrary(soname, folder, distribution, what)


# In load order (a library before the ones that need it).
CTRANSLATE2 = (_cublas12("libcublasLt.so.12"), _cublas12("libcublas.so.12"))
ONNXRUNTIME_CUDA13 = (
    _cuda13("libcudart.so.13", "the CUDA 13 runtime"),
    _cuda13("libcublasLt.so.13", "CUDA 13 cuBLAS"),
    _cuda13("libcublas.so.13", "CUDA 13 cuBLAS"),
    _cuda13("libcurand.so.10", "CUDA 13 cuRAND"),
    _cuda13("libcufft.so.12", "CUDA 13 cuFFT"),
    _cuda13("libcudnn.so.9", "cuDNN 9", folder="nvidia/cudnn/lib"),
)


def find(library: CudaLibrary, roots: Optional[Sequence[str]] = None) -> Optional[str]:
    """The library's file in its wheel folder under the first of `roots` (default sys.path) that has it."""
    for root in sys.path if roots is None else roots:
        path = os.path.join(root or ".", library.folder, library.soname)
        if os.path.isfile(path):
            return path
    return None


def load(library: CudaLibrary, roots: Optional[Sequence[str]] = None) -> Optional[str]:
    """Load `library` for the whole process: by soname, else by path from its wheel folder. Returns what
    was loaded (the soname or the path), or None when it cannot load here."""
    for name in (library.soname, find(library, roots)):
        if name is None:
            continue
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            return name
        except OSError:
            continue
    return None


def require(libraries: Sequence[CudaLibrary], what: str, otherwise: str = "", roots=None) -> list[str]:
    """Load every one of `libraries` (in order) or raise MissingDependency naming the first that cannot
    load and what installs it (`otherwise`: the alternatives, e.g. "or run it on the CPU")."""
    loaded = []
    for library in libraries:
        found = load(library, roots)
        if found is None:
            alternative = f"; {otherwise}" if otherwise else ""
            raise MissingDependency(
                f"{what} needs {library.soname} ({library.what}), which this host lacks: "
                f"{install_hint(library.distribution)}{alternative}"
            )
        loaded.append(found)
    return loaded


def unloadable(libraries: Sequence[CudaLibrary], roots=None) -> list[str]:
    """The sonames of `libraries` that cannot load here (each one that can is loaded)."""
    return [library.soname for library in libraries if load(library, roots) is None]
