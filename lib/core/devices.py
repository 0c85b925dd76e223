"""Facts about the device a measurement ran on.

GPU facts come from nvidia-ml-py (`import pynvml`); with no GPU, no driver or
no package we describe the CPU instead (model name from /proc/cpuinfo, core
count). Nothing here raises: a probe that fails just leaves a field empty.
"""

from __future__ import annotations

import os
import platform
import re
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Optional

from audionet.lib.core.config import split_list
from audionet.lib.core.errors import BackendError

SAMPLE_INTERVAL_S = 0.15


@dataclass
class DeviceInfo:
    kind: str  # "cuda" or "cpu"
    name: str
    slug: str
    compute_capability: Optional[str] = None
    memory_total_gb: Optional[float] = None
    driver: Optional[str] = None
    cpu_model: str = ""
    cpu_cores: int = 1
    machine: str = field(default_factory=platform.machine)

    def as_dict(self) -> dict:
        return asdict(self)


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")


def cpu_model_name() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown cpu"


def _nvml():
    """The initialised pynvml module, or None (no package, driver or GPU)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml if pynvml.nvmlDeviceGetCount() > 0 else None
    except Exception:  # NVMLError_LibraryNotFound, ImportError, driver mismatch
        return None


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def describe(index: int = 0, prefer_gpu: bool = True) -> DeviceInfo:
    """The GPU at `index` if there is one (and `prefer_gpu`), else the CPU."""
    cores = os.cpu_count() or 1
    cpu = cpu_model_name()
    nvml = _nvml() if prefer_gpu else None
    if nvml is not None:
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            name = _text(nvml.nvmlDeviceGetName(handle))
            major, minor = nvml.nvmlDeviceGetCudaComputeCapability(handle)
            total = nvml.nvmlDeviceGetMemoryInfo(handle).total / 1024**3
            return DeviceInfo(
                kind="cuda",
                name=name,
                slug=_slugify(name),
                compute_capability=f"{major}.{minor}",
                memory_total_gb=round(total, 2),
                driver=_text(nvml.nvmlSystemGetDriverVersion()),
                cpu_model=cpu,
                cpu_cores=cores,
            )
        except Exception:
            pass
    return DeviceInfo(
        kind="cpu", name=cpu, slug=f"cpu-{_slugify(platform.machine())}-{cores}core", cpu_model=cpu, cpu_cores=cores
    )


def describe_device(device: str) -> DeviceInfo:
    """Facts for a backend device string ("cpu", "cuda", "cuda:1", "auto")."""
    return describe(cuda_index(device), prefer_gpu=not device.startswith("cpu"))


def device_slug(device: str = "auto") -> str:
    """Slug for a backend device string: "cpu" always gives the CPU slug."""
    return describe_device(device).slug


def environment() -> dict:
    """Python, platform, torch and the CUDA it runs (None without a visible GPU), for result files."""
    info = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda if torch.cuda.is_available() else None
    except ImportError:
        pass
    return info


def cuda_index(device: str) -> int:
    _, _, index = device.partition(":")
    return int(index) if index.isdigit() else 0


def _torch_cuda():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


class DeviceMonitor:
    """Peak memory and utilisation during a `with` block.

    torch's `max_memory_allocated` (what our tensors needed) when torch CUDA is
    in use, plus NVML's device-wide used memory and utilisation sampled every
    150 ms in a background thread. On CPU it records nothing and costs nothing.
    """

    def __init__(self, index: int = 0, interval: float = SAMPLE_INTERVAL_S):
        self.index, self.interval = index, interval
        self.torch_peak_gb: Optional[float] = None
        self.nvml_peak_gb: Optional[float] = None
        self.utilisation: list[int] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._nvml = _nvml()
        self._torch = _torch_cuda()

    def __enter__(self) -> DeviceMonitor:
        if self._torch is not None:
            self._torch.cuda.reset_peak_memory_stats(self.index)
        if self._nvml is not None:
            self._thread = threading.Thread(target=self._sample, name="gpu-monitor", daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        try:
            handle = self._nvml.nvmlDeviceGetHandleByIndex(self.index)
            while True:
                used = self._nvml.nvmlDeviceGetMemoryInfo(handle).used / 1024**3
                self.nvml_peak_gb = max(self.nvml_peak_gb or 0.0, used)
                self.utilisation.append(int(self._nvml.nvmlDeviceGetUtilizationRates(handle).gpu))
                if self._stop.wait(self.interval):
                    return
        except Exception:
            return

    def __exit__(self, *_exc) -> bool:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        if self._torch is not None:
            self.torch_peak_gb = self._torch.cuda.max_memory_allocated(self.index) / 1024**3
        return False

    def result(self) -> dict:
        util = self.utilisation
        return {
            "peak_torch_gb": None if self.torch_peak_gb is None else round(self.torch_peak_gb, 3),
            "peak_nvml_used_gb": None if self.nvml_peak_gb is None else round(self.nvml_peak_gb, 3),
            "util_mean_pct": round(sum(util) / len(util), 1) if util else None,
            "util_max_pct": max(util) if util else None,
            "util_samples": len(util),
        }


def torch_build(torch) -> str:
    """Which torch this is, for a line saying why no GPU is visible: a CPU build, or the CUDA it brings
    (CUDA 13 needs an NVIDIA driver of the 580 series or newer)."""
    if not torch.version.cuda:
        return f"torch {torch.__version__} is a CPU build"
    return f"torch {torch.__version__} is a CUDA {torch.version.cuda} build; CUDA 13 needs NVIDIA driver 580 or newer"


def resolve_device(device: str = "auto", flag: str = "") -> str:
    """auto -> cuda when a GPU is visible, else cpu; cpu | cuda | cuda:N are checked.
    The one device rule for miner, validator and bench; `flag` names the flag in errors."""
    import torch

    where = f"{flag}: " if flag else ""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()):
        if not torch.cuda.is_available():
            raise BackendError(f"{where}device {device} requested but no CUDA GPU is visible ({torch_build(torch)})")
        index = int(device[5:]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise BackendError(
                f"{where}device {device} requested but only {torch.cuda.device_count()} GPU(s) are visible"
            )
        return device
    raise BackendError(f"{where}unknown device {device!r}; use auto, cpu, cuda or cuda:N")


def resolve_devices(devices: str = "auto", flag: str = "") -> list[str]:
    """A comma list of devices (the miner's pool: one model replica per device and service) by the
    same rule as `resolve_device`, item by item. `auto` alone: every visible GPU (cuda:0 .. cuda:N-1),
    else cpu; `cuda` means cuda:0, so a device has one name. A device listed twice gets two replicas
    (on one GPU that was slower in the parallel-requests study (docs/methodology.md#parallel-requests-per-gpu): list it twice only where measured faster)."""
    import torch

    where = f"{flag}: " if flag else ""
    items = split_list(devices)
    if items == ["auto"]:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return [f"cuda:{index}" for index in range(count)] or ["cpu"]
    if not items or "auto" in items:
        raise BackendError(f"{where}give auto alone, or a comma list of cpu, cuda, cuda:N (got {devices!r})")
    return ["cuda:0" if device == "cuda" else device for device in (resolve_device(item, flag) for item in items)]


def device_labels(devices: Sequence[str]) -> list[str]:
    """A label per replica device (the miner's pool, the validator's evaluator replicas), unique among them: the device's slug (the GPU name); with the
    device index where two devices share a model; -r1, -r2 for a device listed twice."""
    slugs = [describe_device(device).slug for device in devices]
    owners = {slug: {d for d, s in zip(devices, slugs) if s == slug} for slug in slugs}
    return unique(
        [
            slug if len(owners[slug]) == 1 else f"{slug}-{device.replace(':', '')}"
            for device, slug in zip(devices, slugs)
        ]
    )


def unique(labels: Sequence[str]) -> list[str]:
    """Labels made unique: a label that occurs more than once becomes <label>-r1, <label>-r2, ..."""
    repeats, seen = Counter(labels), Counter()
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if repeats[label] == 1 else f"{label}-r{seen[label]}")
    return out


def bind_cuda(device: str) -> None:
    """Make `device` the calling thread's current CUDA device (a replica's worker threads: the miner's pool, the
    validator's evaluator replicas), so code that uses the current device (CUDA graphs, streams, bf16 checks)
    does not land on cuda:0."""
    if device.startswith("cuda"):
        try:
            import torch

            torch.cuda.set_device(torch.device(device))
        except Exception:  # no torch CUDA: the model has already failed to load or runs elsewhere
            pass
