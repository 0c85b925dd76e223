"""dtype auto is decided per device: a pool may mix a GPU without bf16 (Turing, 7.5) with one that has it
(Ampere, 8.6). No GPU here: the capability query is the one thing replaced."""

import torch

from audionet.models.hf.loading import resolve_dtype


def test_auto_dtype_follows_each_devices_compute_capability(monkeypatch):
    capability = {0: (8, 6), 1: (7, 5)}
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: capability[index])
    assert resolve_dtype("auto", "cuda:0") is torch.bfloat16
    assert resolve_dtype("auto", "cuda:1") is torch.float16
    assert resolve_dtype("auto", "cuda") is torch.bfloat16
    assert resolve_dtype("auto", "cpu") is torch.float32 and resolve_dtype("float16", "cuda:0") is torch.float16
