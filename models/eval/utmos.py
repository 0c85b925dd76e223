"""UTMOS (the UTokyo-SaruLab MOS predictor, VoiceMOS 2022) through the maintained, fairseq-free
`utmos-pytorch` package: a wav2vec 2.0 base encoder, a listener-conditioned BLSTM and a
projection, predicting naturalness on the 1..5 scale.

Weights load by HF id (`Blinorot/UTMOS-PyTorch`, file `utmos_state_dict.pt`), from a local
folder holding that file, or from the file itself. A checkpoint that does not fit the
architecture is refused in one line (the package itself would load it silently with
missing weights). The model has no padding mask, so padding would shift scores: clips are
scored one by one in a single call per round (the package recommends batch size 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import MosPredictor
from audionet.models.hf.loading import hub_file

SAMPLE_RATE = 16_000
CHECKPOINT = "utmos_state_dict.pt"
DEFAULT_ID = "Blinorot/UTMOS-PyTorch"
LISTENER = 288  # the mean-listener id the original system scores with


class UtmosPredictor(MosPredictor):
    name = "utmos"

    def __init__(self, model: str = DEFAULT_ID, *, device: str = "cpu"):
        import torch

        with needs("UTMOS (--eval.mos utmos:)"):
            from utmos_pytorch.utmos_torch import UTMOSModel, remove_weight_norm_for_jit
        path = hub_file(model, CHECKPOINT)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as error:
            raise BackendError(f"cannot read UTMOS weights {path}: {str(error).splitlines()[0][:160]}") from None
        network = UTMOSModel()
        missing, unexpected = network.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise BackendError(
                f"{path} does not fit the UTMOS architecture ({len(missing)} missing, {len(unexpected)} unexpected keys)"
            )
        remove_weight_norm_for_jit(network)
        self._torch, self._network = torch, network.to(device).eval()
        for module in self._network.modules():
            if isinstance(module, torch.nn.LSTM):
                module.flatten_parameters()  # one contiguous weight block after the move (cuDNN)
        self.model_id, self.device = f"utmos:{model}", device

    def predict(self, clips: Sequence[Audio]) -> list[float]:
        torch, scores = self._torch, []
        with torch.inference_mode():
            for clip in clips:
                wav = torch.from_numpy(resample(clip, SAMPLE_RATE).samples).to(self.device).view(1, 1, -1)
                out = self._network(
                    wav=wav,
                    domains=torch.zeros(1, dtype=torch.int, device=self.device),
                    judge_id=torch.full((1,), LISTENER, dtype=torch.int, device=self.device),
                )
                scores.append(float(out.mean(dim=1).squeeze()) * 2 + 3)  # the package's own scale
        return scores

    def warmup(self) -> None:
        self.predict([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
