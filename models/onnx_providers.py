"""Which onnxruntime execution providers run an ONNX model (Kokoro, DNSMOS) on a device, and why not CUDA.

On a CUDA device the model runs on onnxruntime-gpu's CUDA provider with cuDNN's convolution algorithm
search set to HEURISTIC: the default (EXHAUSTIVE) benchmarks every convolution algorithm again for
every new input shape, and Kokoro's shapes change with every sentence length, so on a GPU it can end
up slower than the CPU (kokoro-onnx issue #125).

The CUDA provider needs a matching CUDA: onnxruntime-gpu 1.31.1 (requirements-gpu.txt) is a CUDA 13
build and uses the CUDA 13 and cuDNN 9 libraries that torch==2.13.0's wheels install; an older CUDA 12
build would look for libcublasLt.so.12 and, without it, silently run on the CPU. `cuda_problem()` says
in one line why the CUDA provider cannot run here (no CUDA provider, a CUDA major other than torch's,
a library that does not load), and the model then runs on the CPU with that line logged; the device it
reports is the one it really runs on. The CPU stays the offline default.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Optional, Union

from audionet.lib.core import cuda_libs
from audionet.lib.core.requirements import CONSTRAINTS, TORCH, install_hint

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
CUDA_OPTIONS = {"cudnn_conv_algo_search": "HEURISTIC"}
LIBRARIES = {"13": cuda_libs.ONNXRUNTIME_CUDA13}  # per CUDA major of the onnxruntime-gpu build: what must load

Provider = Union[str, tuple[str, dict]]
log = logging.getLogger("onnxruntime-providers")


def _major(version: Optional[str]) -> Optional[str]:
    return version.split(".")[0] if version else None


def diagnose(
    available: Sequence[str], build_cuda: Optional[str], torch_cuda: Optional[str], unloadable: Sequence[str]
) -> Optional[str]:
    """Why the CUDA provider cannot run (one line), or None. `available`: onnxruntime's providers;
    `build_cuda`: the CUDA version onnxruntime-gpu was built for; `torch_cuda`: torch.version.cuda;
    `unloadable`: the sonames of that build's CUDA libraries that do not load here."""
    fix = f"pip uninstall -y onnxruntime && {install_hint('onnxruntime-gpu')}"
    if CUDA not in available:
        return f"this onnxruntime has no {CUDA}: {fix}"
    if _major(build_cuda) and _major(torch_cuda) and _major(build_cuda) != _major(torch_cuda):
        return f"onnxruntime-gpu is a CUDA {build_cuda} build but torch brings CUDA {torch_cuda}: {fix}"
    if unloadable:
        return (
            f"onnxruntime's CUDA provider needs {unloadable[0]}, which does not load here (PyPI's {TORCH} "
            f"installs it with its CUDA {_major(build_cuda)} wheels: pip install {CONSTRAINTS} torch)"
        )
    return None


def cuda_problem() -> Optional[str]:
    """`diagnose` for this host's onnxruntime, torch and CUDA libraries (loading the libraries it checks,
    from torch's NVIDIA wheels, as onnxruntime.preload_dlls does)."""
    import onnxruntime as ort

    available = ort.get_available_providers()
    if CUDA not in available:
        return diagnose(available, None, None, ())
    try:
        from onnxruntime.capi.build_and_package_info import cuda_version as build_cuda
    except ImportError:
        build_cuda = None
    try:
        import torch  # loads its own CUDA libraries first, as onnxruntime recommends

        torch_cuda = torch.version.cuda
    except ImportError:
        torch_cuda = None
    libraries = LIBRARIES.get(_major(build_cuda) or "", ())
    return diagnose(available, build_cuda, torch_cuda, cuda_libs.unloadable(libraries))


def select_providers(device: str, problem: Optional[str], who: str) -> tuple[list[Provider], str, Optional[str]]:
    """(providers for `ort.InferenceSession`, the device the model really runs on, a fallback log line
    or None) for a backend device string; `problem`: `cuda_problem()` on a CUDA device; `who` names the
    model in the log line."""
    if not device.startswith("cuda"):
        return [CPU], "cpu", None
    if problem:
        return [CPU], "cpu", f"{who} on {device}: {problem}; running on the CPU"
    _, _, index = device.partition(":")
    options = {"device_id": int(index) if index.isdigit() else 0, **CUDA_OPTIONS}
    # The CPU provider stays last: onnxruntime places the few operators CUDA lacks there.
    return [(CUDA, options), CPU], f"cuda:{options['device_id']}", None


def providers_for(device: str, who: str) -> tuple[list[Provider], str]:
    """`select_providers` for this host, the fallback line logged once."""
    providers, used, fallback = select_providers(device, cuda_problem() if device.startswith("cuda") else None, who)
    if fallback:
        log.warning("%s", fallback)
    return providers, used


def running_on(session, used: str, who: str) -> str:
    """The device an opened session really runs on: onnxruntime drops a CUDA provider that fails to start
    (logging to stderr only), so a session planned for CUDA is checked once it exists."""
    if used != "cpu" and session.get_providers()[:1] != [CUDA]:
        log.warning("%s on %s: onnxruntime did not start its CUDA provider; running on the CPU", who, used)
        return "cpu"
    return used
