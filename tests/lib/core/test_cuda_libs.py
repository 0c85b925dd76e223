"""CUDA libraries outside torch: found in their NVIDIA wheel's folder, loaded by path for the whole
process, and a missing one is one line naming it and what installs it (no GPU or CUDA 12 here)."""

import os
import shutil
import subprocess
import sys

import pytest

from audionet.lib.core.cuda_libs import CTRANSLATE2, CudaLibrary, find, load, require, unloadable
from audionet.lib.core.errors import MissingDependency
from tests.files import REPO

CUBLAS_FIX = "pip install -c constraints.txt 'nvidia-cublas-cu12==12.9.3.13' (requirements-cuda12.txt)"


def wheel_folder(root, library: CudaLibrary, content: bytes = b"not a shared library") -> str:
    path = os.path.join(root, library.folder, library.soname)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)
    return path


def test_a_library_is_found_in_the_first_wheel_folder_that_has_it(tmp_path):
    first, second = str(tmp_path / "a"), str(tmp_path / "b")
    path = wheel_folder(second, CTRANSLATE2[1])
    assert find(CTRANSLATE2[1], [first, second]) == path
    assert find(CTRANSLATE2[0], [first, second]) is None


def test_a_system_library_loads_by_soname_and_a_broken_file_does_not(tmp_path):
    libc = CudaLibrary("libc.so.6", "nowhere", "none", "the C library")
    assert load(libc, []) == "libc.so.6"
    fake = CudaLibrary("libaudionet-missing.so.1", "nvidia/fake/lib", "none", "a fake")
    wheel_folder(str(tmp_path), fake)
    assert load(fake, [str(tmp_path)]) is None
    assert unloadable([libc, fake], [str(tmp_path)]) == ["libaudionet-missing.so.1"]


def test_a_missing_cuda12_cublas_is_one_line_naming_it_and_its_requirement(tmp_path):
    if load(CTRANSLATE2[0]) is not None:
        pytest.skip("this host has a CUDA 12 cuBLAS")
    with pytest.raises(MissingDependency) as caught:
        require(
            CTRANSLATE2, "ASR whisper:tiny.en (CTranslate2) on CUDA", "or --eval.devices cpu", roots=[str(tmp_path)]
        )
    assert str(caught.value) == (
        "ASR whisper:tiny.en (CTranslate2) on CUDA needs libcublasLt.so.12 (CUDA 12 cuBLAS), which this host "
        f"lacks: {CUBLAS_FIX}; or --eval.devices cpu"
    )


def test_a_library_in_a_wheel_folder_is_loaded_by_path_and_then_found_by_its_soname(tmp_path):
    """A real shared library with cuBLASLt's soname, built here into the folder nvidia-cublas-cu12 uses:
    once `require` loaded it by path, a later dlopen of the bare soname (what CTranslate2 does) finds it."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in library")
    library = CTRANSLATE2[0]
    path = wheel_folder(str(tmp_path), library)
    source = tmp_path / "probe.c"
    source.write_text("int audionet_probe(void) { return 12; }\n")
    subprocess.run([compiler, "-shared", "-fPIC", f"-Wl,-soname,{library.soname}", "-o", path, str(source)], check=True)
    code = (
        "import ctypes\n"
        "from audionet.lib.core.cuda_libs import CTRANSLATE2, require\n"
        f"print(require(CTRANSLATE2[:1], 'test', roots=[{str(tmp_path)!r}]))\n"
        f"print(ctypes.CDLL({library.soname!r}).audionet_probe())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-1500:]
    if done.stdout.splitlines()[0] == str([library.soname]):
        pytest.skip("this host has a CUDA 12 cuBLAS of its own")
    assert done.stdout.splitlines() == [str([path]), "12"]
