"""DNSMOS P.835 overall quality (OVRL) from the ONNX model shipped in speechmos.

speechmos' own `run` slides a 9.01 s window one second at a time and also
runs the P.808 model on a mel spectrogram: about 2 s per clip here. We call
the P.835 network directly on ONE 9.01 s window per clip (the centre of a
longer clip; a shorter clip is tiled to fill it, as speechmos does), batch
the round's windows into one ONNX call, and apply speechmos' published
polynomial calibration. Measured cost: benchmarks/evaluators/main.py.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import MosPredictor
from audionet.models.onnx_providers import providers_for, running_on

SAMPLE_RATE = 16_000
WINDOW = int(9.01 * SAMPLE_RATE)
OVRL_CALIBRATION = np.poly1d([-0.06766283, 1.11546468, 0.04602535])  # speechmos, non-personalised


def _window(samples: np.ndarray) -> np.ndarray:
    if len(samples) == 0:
        return np.zeros(WINDOW, np.float32)
    if len(samples) < WINDOW:
        samples = np.tile(samples, WINDOW // len(samples) + 1)
    start = (len(samples) - WINDOW) // 2
    return np.clip(samples[start : start + WINDOW], -1.0, 1.0).astype(np.float32)


class DnsMos(MosPredictor):
    model_id = "dnsmos:p835-ovrl"
    name = "dnsmos"

    def __init__(self, device: str = "cpu", threads: int | None = None, batch_size: int = 16):
        with needs("DNSMOS (--eval.mos dnsmos)"):
            import onnxruntime as ort
            import speechmos
        path = os.path.join(os.path.dirname(speechmos.__file__), "dnsmos_models", "sig_bak_ovr.onnx")
        if not os.path.exists(path):
            raise BackendError(f"DNSMOS model not found at {path}")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        providers, used = providers_for(device, "DNSMOS")  # on a CUDA device without a working provider: the CPU
        self._session = ort.InferenceSession(path, options, providers=providers)
        self.device, self.batch_size = running_on(self._session, used, "DNSMOS"), batch_size

    def predict(self, clips: Sequence[Audio]) -> list[float]:
        scores: list[float] = []
        for start in range(0, len(clips), self.batch_size):
            batch = np.stack(
                [_window(resample(c, SAMPLE_RATE).samples) for c in clips[start : start + self.batch_size]]
            )
            raw = self._session.run(None, {"input_1": batch})[0]
            scores.extend(float(OVRL_CALIBRATION(row[2])) for row in raw)
        return scores

    def warmup(self) -> None:
        self.predict([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
