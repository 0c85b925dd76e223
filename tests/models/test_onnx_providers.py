"""Execution providers for the ONNX models (Kokoro, DNSMOS) per device, and the one-line reason a CUDA
device falls back to the CPU (the GPU path is checked up to that fallback: no GPU here)."""

import logging

import pytest

from audionet.models.onnx_providers import CPU, CUDA, cuda_problem, diagnose, select_providers

GPU_BUILD = ["TensorrtExecutionProvider", CUDA, CPU]  # what onnxruntime-gpu offers on a CUDA host
CPU_BUILD = ["AzureExecutionProvider", CPU]  # the plain onnxruntime wheel
FIX = "pip uninstall -y onnxruntime && pip install -c constraints.txt 'onnxruntime-gpu==1.31.1' (requirements-gpu.txt)"


def test_cuda_device_gets_the_cuda_provider_with_heuristic_conv_search():
    providers, used, fallback = select_providers("cuda:1", None, "Kokoro")
    assert providers == [(CUDA, {"device_id": 1, "cudnn_conv_algo_search": "HEURISTIC"}), CPU]
    assert used == "cuda:1" and fallback is None
    assert select_providers("cuda", None, "Kokoro")[0][0] == (
        CUDA,
        {"device_id": 0, "cudnn_conv_algo_search": "HEURISTIC"},
    )


def test_cpu_stays_on_the_cpu_even_where_cuda_exists():
    assert select_providers("cpu", None, "Kokoro") == ([CPU], "cpu", None)


def test_a_problem_falls_back_to_the_cpu_with_one_line_naming_it():
    providers, used, fallback = select_providers("cuda:0", "this onnxruntime has no CUDA provider", "DNSMOS")
    assert providers == [CPU] and used == "cpu"
    assert fallback == "DNSMOS on cuda:0: this onnxruntime has no CUDA provider; running on the CPU"


@pytest.mark.parametrize(
    ("available", "build", "torch_cuda", "unloadable", "expected"),
    [
        (CPU_BUILD, None, "13.0", [], f"this onnxruntime has no {CUDA}: {FIX}"),
        (GPU_BUILD, "12.8", "13.0", [], f"onnxruntime-gpu is a CUDA 12.8 build but torch brings CUDA 13.0: {FIX}"),
        (
            GPU_BUILD,
            "13.0",
            "13.0",
            ["libcudnn.so.9"],
            "onnxruntime's CUDA provider needs libcudnn.so.9, which does not load here "
            "(PyPI's torch==2.13.0 installs it with its CUDA 13 wheels: pip install -c constraints.txt torch)",
        ),
        (GPU_BUILD, "13.0", "13.0", [], None),
        (GPU_BUILD, "13.0", None, [], None),  # a CPU torch says nothing about the CUDA major
    ],
)
def test_the_diagnosis_names_what_is_missing_and_the_fix(available, build, torch_cuda, unloadable, expected):
    assert diagnose(available, build, torch_cuda, unloadable) == expected


def test_this_hosts_plain_onnxruntime_is_diagnosed_as_having_no_cuda_provider():
    import onnxruntime

    if CUDA in onnxruntime.get_available_providers():
        pytest.skip("onnxruntime-gpu is installed here")
    assert cuda_problem() == f"this onnxruntime has no {CUDA}: {FIX}"


def test_kokoro_on_a_cuda_device_without_the_provider_runs_on_the_shared_cpu_runtime(caplog):
    from audionet.models.kokoro.tts import KokoroSynthesizer

    cpu = KokoroSynthesizer()
    with caplog.at_level(logging.WARNING, logger="onnxruntime-providers"):
        gpu = KokoroSynthesizer(device="cuda:0")
    if gpu.device != "cpu":
        pytest.skip("onnxruntime-gpu with a visible GPU: the CUDA path ran (make gpu-check measures it)")
    assert gpu.kokoro is cpu.kokoro  # one CPU session, not one per requested GPU
    assert [r.getMessage() for r in caplog.records] == [f"Kokoro on cuda:0: {cuda_problem()}; running on the CPU"]
    assert gpu.synthesize("Still speaking.").seconds > 0.5


def test_dnsmos_on_a_cuda_device_reports_the_device_it_really_runs_on(caplog):
    from audionet.models.eval.dnsmos import DnsMos

    with caplog.at_level(logging.WARNING, logger="onnxruntime-providers"):
        dnsmos = DnsMos(device="cuda:0")
    if dnsmos.device != "cpu":
        pytest.skip("onnxruntime-gpu with a visible GPU: DNSMOS runs on it")
    assert [r.getMessage() for r in caplog.records] == [f"DNSMOS on cuda:0: {cuda_problem()}; running on the CPU"]
