"""Kokoro's execution providers per device (the GPU path is checked up to its CPU fallback: no GPU here)."""

import logging

import pytest

from audionet.models.kokoro.providers import CPU, CUDA, select_providers

GPU_BUILD = ["TensorrtExecutionProvider", CUDA, CPU]  # what onnxruntime-gpu offers on a CUDA host
CPU_BUILD = ["AzureExecutionProvider", CPU]  # the plain onnxruntime wheel


def test_cuda_device_gets_the_cuda_provider_with_heuristic_conv_search():
    providers, used, fallback = select_providers("cuda:1", GPU_BUILD)
    assert providers == [(CUDA, {"device_id": 1, "cudnn_conv_algo_search": "HEURISTIC"}), CPU]
    assert used == "cuda:1" and fallback is None
    assert select_providers("cuda", GPU_BUILD)[0][0] == (CUDA, {"device_id": 0, "cudnn_conv_algo_search": "HEURISTIC"})


def test_cpu_stays_on_the_cpu_even_where_cuda_exists():
    assert select_providers("cpu", GPU_BUILD) == ([CPU], "cpu", None)


def test_no_cuda_provider_falls_back_to_the_cpu_with_one_line():
    providers, used, fallback = select_providers("cuda:0", CPU_BUILD)
    assert providers == [CPU] and used == "cpu"
    assert "onnxruntime-gpu" in fallback and "\n" not in fallback


def test_kokoro_on_a_cuda_device_without_the_provider_runs_on_the_shared_cpu_runtime(caplog):
    from audionet.models.kokoro.tts import KokoroSynthesizer

    cpu = KokoroSynthesizer()
    with caplog.at_level(logging.WARNING, logger="kokoro"):
        gpu = KokoroSynthesizer(device="cuda:0")
    if gpu.device != "cpu":
        pytest.skip("onnxruntime-gpu with a visible GPU: the CUDA path ran (make gpu-check measures it)")
    assert gpu.kokoro is cpu.kokoro  # one CPU session, not one per requested GPU
    assert [r.getMessage() for r in caplog.records if "onnxruntime-gpu" in r.getMessage()] != []
    assert gpu.synthesize("Still speaking.").seconds > 0.5
