"""What every transformers backend shares: device and dtype chosen once,
seeding, and loading by HF id or local path with one-line errors.

A model that is neither a local directory nor in the HF cache while
`HF_HUB_OFFLINE=1` ends as BackendError("model X not found locally and the
hub is offline"), never as a traceback from deep inside huggingface_hub.
"""

from __future__ import annotations

import json
import os
import random
from typing import Any

import numpy as np

from audionet.lib.core.errors import BackendError

DTYPES = ("auto", "float32", "float16", "bfloat16")


def resolve_dtype(dtype: str, device: str):
    """auto -> bfloat16 on a CUDA device that supports it (compute capability 8.0+), else float16; float32 on CPU."""
    import torch

    if dtype not in DTYPES:
        raise BackendError(f"unknown dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    if dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        # Asked of this device, not the current one: a pool may mix a Turing GPU (no bf16) with an Ampere one.
        from audionet.lib.core.devices import cuda_index

        major, _minor = torch.cuda.get_device_capability(cuda_index(device))
        return torch.bfloat16 if major >= 8 else torch.float16
    return torch.float32


def seed_everything(seed: int) -> Any:
    """Seed python, numpy and torch (all devices); returns a torch.Generator on CPU
    for code that wants a private stream."""
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _missing(name: str, error: Exception) -> BackendError:
    if hub_offline():
        return BackendError(f"model {name} not found locally and the hub is offline")
    return BackendError(f"cannot load model {name}: {type(error).__name__}: {str(error).splitlines()[0][:200]}")


def from_pretrained(loader: Any, name: str, **kwargs) -> Any:
    """`loader.from_pretrained(name, **kwargs)` with missing-model errors turned into one line."""
    if not os.path.isdir(name) and (name.startswith(("/", ".", "~")) or name.count("/") > 1):
        raise BackendError(f"model directory {name} does not exist")
    try:
        return loader.from_pretrained(name, **kwargs)
    except (OSError, ValueError) as error:  # hub / missing-file errors are OSError subclasses
        raise _missing(name, error) from None


def hub_file(name: str, filename: str) -> str:
    """A model file: `name` itself (a file), `name/filename` (a folder), or `filename` from the HF
    repo `name` (the cache first; a one-line error when it is missing and the hub is offline)."""
    if os.path.isfile(name):
        return name
    if os.path.isdir(name) or name.startswith(("/", ".", "~")):
        path = os.path.join(os.path.expanduser(name), filename)
        if not os.path.isfile(path):
            raise BackendError(f"model file {path} does not exist")
        return path
    from huggingface_hub import hf_hub_download

    try:
        return hf_hub_download(repo_id=name, filename=filename)
    except Exception as error:  # hub, network and offline-cache errors alike
        raise _missing(name, error) from None


def hub_folder(name: str, patterns: tuple[str, ...]) -> str:
    """A model folder: `name` itself (a local directory), or the files of the HF repo `name` that match `patterns`
    (the cache first; a one-line error when they are missing and the hub is offline), for a package that loads
    from a folder only."""
    if os.path.isdir(os.path.expanduser(name)):
        return os.path.expanduser(name)
    if name.startswith(("/", ".", "~")) or name.count("/") > 1:
        raise BackendError(f"model directory {name} does not exist")
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(repo_id=name, allow_patterns=list(patterns))
    except Exception as error:  # hub, network and offline-cache errors alike
        raise _missing(name, error) from None


def _json_file(name: str, filename: str) -> dict | None:
    """`filename` of `name` (HF id or local directory) as JSON; None when it has none (or it is not cached while
    the hub is offline: `model_type` then says what is missing, in one line)."""
    if os.path.isdir(os.path.expanduser(name)):
        path = os.path.join(os.path.expanduser(name), filename)
        if not os.path.isfile(path):
            return None
    elif name.startswith(("/", ".", "~")):
        return None
    else:
        from huggingface_hub import hf_hub_download

        try:
            path = hf_hub_download(repo_id=name, filename=filename)
        except Exception:  # no such file, not cached while offline, no such repo
            return None
    with open(path) as handle:
        found = json.load(handle)
    return found if isinstance(found, dict) else None


def pipeline_class(name: str) -> str | None:
    """The `_class_name` of a diffusers `model_index.json` at `name` (HF id or local directory); None when
    `name` has none (a transformers model, or nothing at all: `model_type` then says which, in one line)."""
    index = _json_file(name, "model_index.json")
    return None if index is None else str(index.get("_class_name", ""))


def coqui_model(name: str) -> str | None:
    """The `model` of a Coqui TTS `config.json` at `name` (xtts, vits, ...): Coqui's configs name their model there
    and have no transformers `model_type`. None for anything else."""
    config = _json_file(name, "config.json")
    if config is None or "model_type" in config or not isinstance(config.get("model"), str):
        return None
    return config["model"]


def model_type(name: str) -> str:
    """The `model_type` of the config at `name` (HF id or local directory), read from its config.json, so a family
    whose package defines its own (omnivoice) routes without transformers knowing it; transformers' AutoConfig
    says, in one line, what is missing where there is none."""
    config = _json_file(name, "config.json")
    if config is not None and isinstance(config.get("model_type"), str):
        return config["model_type"]
    from transformers import AutoConfig

    return str(getattr(from_pretrained(AutoConfig, name), "model_type", ""))


def place(model: Any, device: str, dtype) -> Any:
    """Move to device/dtype once and switch to inference mode."""
    model = model.to(device=device, dtype=dtype)
    model.eval()
    return model
