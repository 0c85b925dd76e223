"""Which onnxruntime execution providers run Kokoro on a device.

On a CUDA device Kokoro runs on onnxruntime-gpu's CUDA provider with cuDNN's convolution algorithm
search set to HEURISTIC: the default (EXHAUSTIVE) benchmarks every convolution algorithm again for
every new input shape, and Kokoro's shapes change with every sentence length, so on a GPU it can end
up slower than the CPU (kokoro-onnx issue #125). Where the installed onnxruntime has no CUDA provider
(the plain `onnxruntime` wheel; `onnxruntime-gpu` replaces it on GPU hosts, see docs/gpu-hosts.md)
Kokoro falls back to the CPU with one log line. The CPU stays the offline default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
CUDA_OPTIONS = {"cudnn_conv_algo_search": "HEURISTIC"}

Provider = Union[str, tuple[str, dict]]


def select_providers(device: str, available: Sequence[str]) -> tuple[list[Provider], str, Optional[str]]:
    """(providers for `ort.InferenceSession`, the device Kokoro really runs on, a fallback log line
    or None) for a backend device string and `onnxruntime.get_available_providers()`."""
    if not device.startswith("cuda"):
        return [CPU], "cpu", None
    if CUDA not in available:
        return (
            [CPU],
            "cpu",
            f"Kokoro on {device}: this onnxruntime has no {CUDA} (install onnxruntime-gpu); running on the CPU",
        )
    _, _, index = device.partition(":")
    options = {"device_id": int(index) if index.isdigit() else 0, **CUDA_OPTIONS}
    # The CPU provider stays last: onnxruntime places the few operators CUDA lacks there.
    return [(CUDA, options), CPU], f"cuda:{options['device_id']}", None
