"""The one random-weight builder: published architectures with random weights, built from config, saved,
and loaded by folder through the same code path as the real checkpoints. Output is noise; timings are real.

    random_model("facebook/musicgen-small", cache_dir, size="tiny")     -> the folder (built once)
    random_spec("hf:facebook/musicgen-small", cache_dir, size="full")  -> "hf:<that folder>"
    random_specs({"asr": "whisper:large-v3-turbo", ...}, cache_dir, size, device) -> each spec so

Sizes and ids: table.py (`tiny` for tests, `full` for timing). A spec naming no known id is returned
unchanged; Whisper's stand-in is in the format of the engine that runs it on `device`.
"""

from __future__ import annotations

import logging
import os
import shutil

from audionet.lib.core.config import split_list
from audionet.models.random_weights.table import SIZES, WHISPER_TRANSFORMERS_SUFFIX, stand_ins
from audionet.models.specs import split_spec

__all__ = ["SIZES", "known", "random_model", "random_spec", "random_specs"]
log = logging.getLogger("models.random_weights")


def known(name: str) -> bool:
    return name in stand_ins()


def random_model(name: str, cache_dir: str, size: str = "full", device: str = "cpu") -> str:
    """The folder of the random-weight stand-in for `name` at `size` (built once, then reused). On a CUDA
    `device` its weights are made there first (a GPU draws billions of random numbers in a moment; 2 busy
    cores here took 17 to 50 s for MusicGen-small's 0.6 B), and on the CPU if that fails; either way they are
    saved to the folder and loaded from it."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, not {size!r}")
    table = stand_ins()
    if name not in table:
        raise ValueError(f"no random-weight stand-in for {name!r}; known: {', '.join(sorted(table))}")
    stand_in = table[name]
    size = size if size in stand_in.sizes else next(iter(stand_in.sizes))
    out = os.path.join(cache_dir, f"{name.replace('/', '--')}-random-{size}")
    marker = os.path.join(out, ".complete")
    if not os.path.exists(marker):
        import torch

        for where in dict.fromkeys((device if device.startswith("cuda") else "cpu", "cpu")):
            torch.manual_seed(0)
            shutil.rmtree(out, ignore_errors=True)
            try:
                with torch.device(where):  # where the builder's tensors are made
                    stand_in.build(out, **stand_in.sizes[size])
                break
            except Exception as error:  # noqa: BLE001 - any failure on the GPU: the CPU builds it as always
                if where == "cpu":
                    raise
                log.warning(
                    "building %s on %s failed (%s: %s); building it on the CPU",
                    name,
                    where,
                    type(error).__name__,
                    error,
                )
        open(marker, "w").close()
    return out


def _stand_in_name(scheme: str, name: str, device: str) -> str:
    """The table's key for `scheme:name` on `device`: Whisper per engine."""
    if scheme == "whisper":
        from audionet.models.eval.whisper_asr import TRANSFORMERS, engine

        if engine(name, device)[0] == TRANSFORMERS:
            return name + WHISPER_TRANSFORMERS_SUFFIX
    return name


def random_spec(spec: str, cache_dir: str, size: str = "full", device: str = "cpu") -> str:
    """Each part of a (comma-separated) spec that names a known id -> the same scheme on its stand-in."""
    parts = []
    for one in split_list(spec):
        scheme, name = split_spec(one)
        key = _stand_in_name(scheme, name, device) if known(name) else None
        parts.append(f"{scheme}:{random_model(key, cache_dir, size, device)}" if key else one)
    return ",".join(parts)


def random_specs(specs: dict[str, str], cache_dir: str, size: str = "full", device: str = "cpu") -> dict[str, str]:
    return {kind: random_spec(spec, cache_dir, size, device) for kind, spec in specs.items()}
