"""DistillMOS: a small speech-quality model (a CNN on a compressed complex spectrogram and a
transformer with attention pooling) distilled from an XLS-R quality model, predicting MOS 1..5.
Weights and code ship in `distillmos` 0.9.1 (MIT) with the `xls-r-sqa` 0.1.0 layers (MIT), installed with
their dependencies (torchaudio 2.11.0 among them, which its command line uses to read files).

The network scores 7.68 s windows at 16 kHz, each normalised to its own peak. A shorter clip is
zero-padded to one window; a longer one is cut into windows spread evenly over it, one hop of at
most 1 s apart, and their scores averaged: that is the package's own `forward`, done here so the
windows of a whole round go through the network in shared batches. Clips up to 10.7 s get all
their windows (as the package); beyond that at most `max_windows`, spread over the clip the same
way, which bounds the cost of a 30 s clip at 4 windows instead of 24.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import MosPredictor
from audionet.models.eval.shipped import package_file

SAMPLE_RATE = 16_000
WINDOW = 122_880  # the package's SEQ_LEN: 7.68 s
MAX_HOP = 16_000  # the package's MAX_HOP_LEN: windows start at most 1 s apart
WEIGHTS = "weights/distill_mos_v7.pt"
WHAT = "DistillMOS (--eval.mos distillmos)"


def window_starts(length: int, max_windows: int) -> list[int]:
    """Where the package's forward starts each window of a clip of `length` samples (at most max_windows);
    a clip shorter than one window is zero-padded to one (start 0)."""
    overlength = length - WINDOW
    if overlength <= 0:
        return [0]
    count = min(max_windows, math.ceil(overlength / MAX_HOP) + 1)
    return [int(start) for start in (np.linspace(0.0, 1.0, count) * overlength).astype(int)]


def windows(samples: np.ndarray, max_windows: int) -> np.ndarray:
    """(n, WINDOW) windows of one 16 kHz clip, as the package's forward cuts them (at most max_windows)."""
    padded = np.pad(samples, (0, max(0, WINDOW - len(samples))))
    return np.stack([padded[start : start + WINDOW] for start in window_starts(len(samples), max_windows)])


class DistillMos(MosPredictor):
    name = "distillmos"

    def __init__(self, device: str = "cpu", batch_size: int = 8, max_windows: int = 4):
        import torch

        with needs(WHAT):
            from distillmos import sqa
        path = package_file("distillmos", WEIGHTS, WHAT)
        network = sqa.ConvTransformerSQAModel(load_weights=False, segmenting_in_forward=False)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)["model"]
            network.load_state_dict(state)
        except Exception as error:  # a changed package: one line, not a state-dict traceback
            raise BackendError(f"cannot load DistillMOS weights {path}: {str(error).splitlines()[0][:160]}") from None
        self._torch, self._network = torch, network.to(device).eval()
        self.model_id, self.device = "distillmos:v7", device
        self.batch_size, self.max_windows = batch_size, max_windows

    def predict(self, clips: Sequence[Audio]) -> list[float]:
        torch = self._torch
        cut = [windows(resample(clip, SAMPLE_RATE).samples, self.max_windows) for clip in clips]
        if not cut:
            return []
        stacked = np.concatenate(cut).astype(np.float32)
        scores = []
        with torch.inference_mode():
            for start in range(0, len(stacked), self.batch_size):
                batch = torch.from_numpy(stacked[start : start + self.batch_size]).to(self.device)
                scores.append(self._network(batch).reshape(-1).float().cpu().numpy())
        flat = np.concatenate(scores)
        bounds = np.cumsum([0] + [len(c) for c in cut])
        return [float(flat[a:b].mean()) for a, b in zip(bounds[:-1], bounds[1:])]

    def score(self, samples):
        """The MOS of one 16 kHz clip as a torch scalar with its gradient (the same windows as `predict`): what an
        attacker with these weights differentiates (benchmarks/attacks/)."""
        torch = self._torch
        padded = torch.nn.functional.pad(samples, (0, max(0, WINDOW - samples.shape[-1])))
        cut = torch.stack(
            [padded[start : start + WINDOW] for start in window_starts(samples.shape[-1], self.max_windows)]
        )
        return self._network(cut).reshape(-1).mean()

    def warmup(self) -> None:
        self.predict([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
