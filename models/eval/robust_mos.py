"""A naturalness judge that a faint perturbation cannot buy: a small network on features that a signal
40 dB below the speech barely moves, distilled from DistillMOS and hardened on its own attacks
(benchmarks/attacks/student.py trains it; docs/scoring.md#judges-that-cannot-be-bought says why).

Every public judge can be driven by gradient ascent: DistillMOS goes from 2.3 to 4.8 on espeak under a
perturbation of 0.001 of full scale. This one reads only what such a perturbation cannot reach far:

* 32 mel bands (16 kHz, 32 ms Hann windows every 10 ms), each band's energy **floored** at `FLOOR_DB`
  below the clip's loud frames before the log: a band the perturbation could dominate (a pause, the top
  of a weak band) sits on the floor, where added energy moves the log by its ratio to the floor, not to
  the band's own level;
* the clip's level taken out (the loud frames' energy), so gain does not matter;
* pooled over the frames within `ACTIVE_DB` of the loud ones: per band the mean and spread of the
  floored log energy and its mean change from frame to frame, plus the spread of the frame levels.

A two-layer network maps those 97 numbers to a MOS on DistillMOS's 1..5 scale. It was trained on clean
DistillMOS labels of Kokoro, espeak, WORLD-resynthesised and degraded speech, with an adversary in the
loop (projected gradient ascent on the waveform through these very features), so its gradient is small
where the features can move. Everything is differentiable (`forward`): an attacker gets exact gradients.
Weights: `weights/naturalness_student.npz` beside this module (a few kilobytes, made by the study).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.models.eval.base import MosPredictor

SAMPLE_RATE, N_FFT, HOP, N_BANDS = 16_000, 512, 160, 32
BAND_RANGE_HZ = (60.0, 7600.0)
FLOOR_DB = 30.0  # band energies below the loud frames' energy by more than this count as this
ACTIVE_DB = 25.0  # frames within this of the loud frames are pooled (a soft mask, 3 dB wide)
LOUD_QUANTILE = 0.9  # the loud frames' energy: this quantile of the frame energies
N_FEATURES = 3 * N_BANDS + 1
WEIGHTS = Path(__file__).parent / "weights" / "naturalness_student.npz"


def build_features():
    """The torch module: (batch, samples) at 16 kHz -> (batch, N_FEATURES)."""
    import librosa
    import torch

    class Features(torch.nn.Module):
        def __init__(self):
            super().__init__()
            bands = librosa.filters.mel(
                sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=N_BANDS, fmin=BAND_RANGE_HZ[0], fmax=BAND_RANGE_HZ[1]
            )
            self.register_buffer("bands", torch.from_numpy(bands.astype(np.float32)))
            self.register_buffer("window", torch.hann_window(N_FFT))

        def forward(self, samples):
            if samples.shape[-1] <= N_FFT:  # shorter than one window: its silence around it
                samples = torch.nn.functional.pad(samples, (0, N_FFT + 1 - samples.shape[-1]))
            spectrum = torch.stft(samples, N_FFT, HOP, window=self.window, return_complex=True).abs() ** 2
            energy = self.bands @ spectrum  # (batch, bands, frames)
            frames = energy.sum(dim=1)  # (batch, frames)
            loud = torch.quantile(frames, LOUD_QUANTILE, dim=1, keepdim=True).clamp_min(1e-10)
            floored = torch.log10(energy + loud[..., None] * 10 ** (-FLOOR_DB / 10)) - torch.log10(loud)[..., None]
            level_db = 10 * torch.log10(frames / loud + 1e-10)
            weight = torch.sigmoid((level_db + ACTIVE_DB) / 3.0)  # (batch, frames)
            total = weight.sum(dim=1, keepdim=True).clamp_min(1.0)
            mean = (floored * weight[:, None]).sum(dim=2) / total
            spread = (((floored - mean[..., None]) ** 2 * weight[:, None]).sum(dim=2) / total + 1e-6).sqrt()
            pair = weight[:, 1:] * weight[:, :-1]
            change = ((floored[..., 1:] - floored[..., :-1]).abs() * pair[:, None]).sum(dim=2)
            change = change / pair.sum(dim=1, keepdim=True).clamp_min(1.0)
            level_mean = (level_db.clamp_min(-ACTIVE_DB) * weight).sum(dim=1, keepdim=True) / total
            level_spread = (((level_db.clamp_min(-ACTIVE_DB) - level_mean) ** 2) * weight).sum(1, keepdim=True) / total
            return torch.cat([mean, spread, change, (level_spread + 1e-6).sqrt() / 10], dim=1)

    return Features()


def build_network(hidden: int = 16, selected: Sequence[int] = tuple(range(N_FEATURES))):
    """The torch module: features -> MOS on DistillMOS's scale; normalisation of the features is its first
    layer. The output is linear, not squashed: a squashing output saturates, and a saturated judge looks
    robust to gradient attacks only because its gradient vanishes (`RobustMos.predict` clips to 1..5)."""
    import torch

    class Student(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = build_features()
            self.register_buffer("selected", torch.tensor(list(selected), dtype=torch.long))
            self.register_buffer("centre", torch.zeros(len(selected)))
            self.register_buffer("scale", torch.ones(len(selected)))
            self.hidden = torch.nn.Linear(len(selected), hidden)
            self.out = torch.nn.Linear(hidden, 1)

        def forward(self, samples):  # (batch, samples) at 16 kHz -> (batch,) MOS
            z = (self.features(samples)[:, self.selected] - self.centre) / self.scale
            return self.out(torch.tanh(self.hidden(z))).squeeze(-1)

    return Student()


def save_network(network, path: Path = WEIGHTS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().numpy() for k, v in network.state_dict().items() if not k.startswith("features.")}
    np.savez(path, **state)


def load_network(path: Path = WEIGHTS, device: str = "cpu"):
    import torch

    if not path.exists():
        raise BackendError(
            f"the naturalness student's weights are missing: {path} (audionet-bench naturalness-student)"
        )
    with np.load(path) as saved:
        state = {k: torch.from_numpy(saved[k]) for k in saved.files}
    network = build_network(state["hidden.weight"].shape[0], state["selected"].tolist())
    network.load_state_dict({**network.state_dict(), **state})
    return network.to(device).eval()


class RobustMos(MosPredictor):
    """The student as a MOS predictor (`--eval.mos ...,student`): `mos_student`, which the speech services
    use as a ceiling on naturalness (lib/services/speech.py), not as one more opinion in the mix."""

    name = "student"
    model_id = "naturalness-student:v1"
    guard = True  # a judge that bounds others (the attack study's "undefended" Judge leaves it out)

    def __init__(self, device: str = "cpu", path: Path = WEIGHTS):
        import torch

        self._torch, self.device = torch, device
        self.network = load_network(path, device)

    def predict(self, clips: Sequence[Audio]) -> list[float]:
        torch, scores = self._torch, []
        with torch.inference_mode():
            for clip in clips:  # one at a time: the pooled statistics are per clip, so no padding enters them
                samples = torch.from_numpy(resample(clip, SAMPLE_RATE).samples.astype(np.float32)).to(self.device)
                scores.append(min(5.0, max(1.0, float(self.network(samples[None])[0]))))
        return scores

    def warmup(self) -> None:
        self.predict([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
