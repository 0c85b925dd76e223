"""Meta's Audiobox Aesthetics: a WavLM encoder with four heads predicting, on a 1..10 scale,
production quality (PQ), production complexity (PC), content enjoyment (CE) and content
usefulness (CU) of speech, music or sound.

Loaded by HF id (`facebook/audiobox-aesthetics`) or local folder through the package's own
model class (`audiobox_aesthetics.model.aes.AesMultiOutput`, a PyTorchModelHubMixin); the
package's inference helper, which reads files and scores one at a time, is not used: clips are
cut and batched here the way it does: 10 s windows at 16 kHz, zero-padded with
a mask, each window weighted by its share of a full window. All of a round's windows go
through the model in one batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import AestheticsPredictor
from audionet.models.hf.loading import from_pretrained

SAMPLE_RATE = 16_000
WINDOW_S = 10
AXES = ("CE", "CU", "PC", "PQ")
DEFAULT_ID = "facebook/audiobox-aesthetics"


def windows(samples: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """10 s windows (the last zero-padded) and how many real samples each holds."""
    size = WINDOW_S * SAMPLE_RATE
    out = []
    for start in range(0, max(1, len(samples)), size):
        piece = samples[start : start + size]
        out.append((np.pad(piece, (0, size - len(piece))), len(piece)))
    return out


class AudioboxAesthetics(AestheticsPredictor):
    def __init__(self, model: str = DEFAULT_ID, *, device: str = "cpu", batch_size: int = 16):
        import torch

        with needs("Audiobox Aesthetics (--eval.aesthetics audiobox:)"):
            from audiobox_aesthetics.model.aes import AesMultiOutput
        network = from_pretrained(AesMultiOutput, model)
        if not network.target_transform:
            raise BackendError(f"{model} has no score calibration (target_transform): not an Audiobox Aesthetics model")
        self._scale = {axis: network.target_transform[axis] for axis in AXES}
        self._torch, self._network = torch, network.to(device).eval()
        self.model_id, self.device, self.batch_size = f"audiobox:{model}", device, batch_size

    def rate(self, clips: Sequence[Audio]) -> list[dict[str, float]]:
        torch = self._torch
        pieces = [(n, w, real) for n, c in enumerate(clips) for w, real in windows(resample(c, SAMPLE_RATE).samples)]
        raw = {axis: [] for axis in AXES}
        with torch.inference_mode():
            for start in range(0, len(pieces), self.batch_size):
                batch = pieces[start : start + self.batch_size]
                wav = torch.from_numpy(np.stack([w for _, w, _ in batch])).to(self.device).unsqueeze(1)
                mask = torch.zeros_like(wav, dtype=torch.bool)
                for row, (_, _, real) in enumerate(batch):
                    mask[row, :, :real] = True
                predicted = self._network({"wav": wav, "mask": mask})
                for axis in AXES:
                    raw[axis] += [float(v) for v in predicted[axis].float().cpu()]
        out = []
        for n in range(len(clips)):
            rows = [i for i, (clip, _, _) in enumerate(pieces) if clip == n]
            weights = np.array([pieces[i][2] for i in rows], dtype=np.float64)
            scores = {}
            for axis in AXES:
                values = np.array([raw[axis][i] for i in rows]) * self._scale[axis]["std"] + self._scale[axis]["mean"]
                scores[axis] = float((values * weights).sum() / max(weights.sum(), 1.0))
            out.append(scores)
        return out

    def warmup(self) -> None:
        self.rate([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
