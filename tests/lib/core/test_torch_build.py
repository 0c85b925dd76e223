"""The torch build the project installs (PyPI's CUDA 13 torch 2.13.0, torchaudio 2.11.0 beside it), and the start-up
guard's one line for the broken pair: torchaudio beside a CPU-only torch, whose import raises OSError."""

import subprocess
import sys
import textwrap
from importlib import metadata

from audionet.lib.core.errors import EXIT_MISSING
from audionet.lib.core.torch_build import torch_build, torch_pair_problem
from tests.files import REPO


def test_the_venv_has_pypis_torch_and_a_torchaudio_that_loads_beside_it():
    import torch
    import torchaudio

    assert metadata.version("torch") == "2.13.0" and metadata.version("torchaudio") == "2.11.0"  # no local label
    assert torch_build() == {"cuda": torch.version.cuda, "hip": None, "xpu": None} and torch.version.cuda
    assert torch_pair_problem() is None
    resampled = torchaudio.functional.resample(torch.ones(1, 16_000), 16_000, 24_000)
    assert resampled.shape == (1, 24_000)


def fake_pair(folder) -> None:
    """A CPU-only torch (version.py as the +cpu wheel writes it) and a torchaudio whose import fails as the CUDA
    build's does beside it, each with the metadata pip would leave."""
    files = {
        "torch/__init__.py": "",
        "torch/version.py": "from typing import Optional\n__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\n"
        "hip: Optional[str] = None\nxpu: Optional[str] = None\n",
        "torchaudio/__init__.py": "raise OSError('Could not load this library: _torchaudio.abi3.so')\n",
        "torch-2.13.0+cpu.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.13.0+cpu\n",
        "torchaudio-2.11.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: torchaudio\nVersion: 2.11.0\n",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def run(folder, code: str) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.path.insert(0, {str(folder)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


EXPECTED = (
    "torchaudio 2.11.0 cannot load beside torch 2.13.0+cpu, a CPU-only build (Could not load this library: "
    "_torchaudio.abi3.so): install PyPI's torch (pip install -c constraints.txt torch) or uninstall torchaudio"
)


def test_torchaudio_beside_a_cpu_only_torch_stops_every_entry_point_with_one_line(tmp_path):
    fake_pair(tmp_path)
    bench = run(tmp_path, "from audionet.benchmarks.cli import main; sys.exit(main(['generation']))")
    assert bench.returncode == EXIT_MISSING and bench.stderr.splitlines() == [f"audionet-bench generation: {EXPECTED}"]
    # the miner, the validator and `audionet-miner check` start through run_entry_point
    miner = run(tmp_path, "from audionet.neurons.miner import main; sys.exit(main(['--netuid', '1']))")
    assert miner.returncode == EXIT_MISSING and EXPECTED in miner.stderr + miner.stdout
    assert "Traceback" not in miner.stderr
