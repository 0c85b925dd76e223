"""musicnn music taggers (Pons & Serra 2019; `musicnn` 0.1.0, ISC): the MagnaTagATune (MTT) and
Million Song Dataset (MSD) models, 50 tags each, in torch.

The package ships TensorFlow 1 checkpoints and needs TensorFlow 1 to run them; here its
checkpoints are read with numpy (models/eval/tf_checkpoint.py) and the network is written out
again in torch from the paper's description and the checkpoint's shapes (a port, no code of
musicnn's). Only the package's checkpoints and tag lists are used; it installs with --no-deps (it declares
tensorflow and numpy<1.17).

Network, per 3 s patch of a 96-band log-mel spectrogram (187 frames):
* front end: batch norm, then 7x38 and 7x67 "timbral" convolutions (204 filters each) and 128x1,
  64x1, 32x1 "temporal" ones (51 each), each ReLU, batch norm and max-pooled over frequency;
* middle: three 7-frame 1-D convolutions of 64 filters, the last two residual;
* back end: max and mean over time of all of that (753 features each, interleaved), batch norm,
  a 200-unit ReLU layer, batch norm and a 50-tag sigmoid.
Input: 16 kHz, |STFT|^2 with 512 bins every 256 samples, 96 Slaney mel bands, log10(10000 x + 1),
patches of 187 frames one after another (a shorter clip is repeated to fill one, as in training).
A clip's tag scores are the mean over its patches.

The validator's tagger hears the mel bands under a floor (`floor_db`, `BAND_FLOOR_DB` below the loud frames'
strongest band): log10(10000 x + 1) magnifies quiet bands, where a perturbation at 37 dB SNR is as loud as the
music and bought +0.18 to +0.20 of tag adherence through the waveform's floor (issue 46;
docs/scoring.md#judges-that-cannot-be-bought). `floor_db=None` is the tagger as the paper runs it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError, ConfigError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import AudioTagger
from audionet.models.eval.music_floor import LOUD_QUANTILE
from audionet.models.eval.shipped import package_dir
from audionet.models.eval.tf_checkpoint import read_checkpoint

SAMPLE_RATE, N_FFT, HOP, N_MELS, PATCH_FRAMES = 16_000, 512, 256, 96, 187
BN_EPSILON = 1e-3  # tf.layers.batch_normalization's default
TEMPORAL_KERNELS = (128, 64, 32)
MODELS = {"mtt": ("MTT_musicnn", "MTT_LABELS"), "msd": ("MSD_musicnn", "MSD_LABELS")}  # folder, label list
WHAT = "the musicnn taggers"
BAND_FLOOR_DB = 40.0  # mel bands this far below the loud frames' strongest are heard at that level


def log_mel(samples: np.ndarray, floor_db: float | None = None) -> np.ndarray:
    """(frames, 96) musicnn's input representation of 16 kHz samples; `floor_db`: every band at least that far
    below the `LOUD_QUANTILE` of the frames' strongest band power (None: no floor)."""
    import librosa

    if len(samples) < N_FFT:  # a clip shorter than one FFT frame: its silence around it
        samples = np.pad(samples, (0, N_FFT - len(samples)))
    # reflect padding: librosa's default when the models were trained (0.11's is zeros)
    mel = librosa.feature.melspectrogram(
        y=samples, sr=SAMPLE_RATE, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS, pad_mode="reflect"
    )
    if floor_db is not None:
        mel = np.maximum(mel, np.quantile(mel.max(axis=0), LOUD_QUANTILE) * 10 ** (-floor_db / 10))
    # rounded to float16 as the training spectrograms were stored, the log taken in float32
    return np.log10(10_000 * mel.T.astype(np.float16).astype(np.float32) + 1)


def patches(representation: np.ndarray) -> np.ndarray:
    """(n, 187, 96) consecutive patches; a clip shorter than one is repeated to fill it."""
    if len(representation) < PATCH_FRAMES:
        repeats = -(-PATCH_FRAMES // max(1, len(representation)))
        representation = np.tile(representation if len(representation) else np.zeros((1, N_MELS)), (repeats, 1))
    count = len(representation) // PATCH_FRAMES
    return representation[: count * PATCH_FRAMES].reshape(count, PATCH_FRAMES, N_MELS).astype(np.float32)


def _numbered(layer: str, index: int) -> str:
    """TF1's layer names: the first is `layer`, the next `layer_1`, `layer_2`, ..."""
    return f"{layer}_{index}" if index else layer


def build_network(weights: dict[str, np.ndarray]):
    """The torch module of one musicnn checkpoint (inference only). Each batch norm is folded into
    a scale and a shift, each kernel turned to torch's layout, all kept as buffers (moved by .to)."""
    import torch
    import torch.nn.functional as F

    def tensor(name: str):
        if name not in weights:
            raise BackendError(f"musicnn checkpoint has no tensor {name}")
        return torch.from_numpy(np.ascontiguousarray(weights[name], dtype=np.float32))

    class Musicnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for i in range(11):
                bn = _numbered("batch_normalization", i) + "/"
                scale = tensor(bn + "gamma") / torch.sqrt(tensor(bn + "moving_variance") + BN_EPSILON)
                self.register_buffer(f"scale{i}", scale)
                self.register_buffer(f"shift{i}", tensor(bn + "beta") - tensor(bn + "moving_mean") * scale)
            for i in range(8):  # (kh, kw, in, out) -> (out, in, kh, kw)
                self.register_buffer(f"kernel{i}", tensor(_numbered("conv2d", i) + "/kernel").permute(3, 2, 0, 1))
                self.register_buffer(f"bias{i}", tensor(_numbered("conv2d", i) + "/bias"))
            for i in range(2):
                self.register_buffer(f"dense{i}", tensor(_numbered("dense", i) + "/kernel"))
                self.register_buffer(f"dense_bias{i}", tensor(_numbered("dense", i) + "/bias"))

        def norm(self, x, index: int, axis: int):
            shape = [1] * x.dim()
            shape[axis] = -1
            return x * getattr(self, f"scale{index}").view(shape) + getattr(self, f"shift{index}").view(shape)

        def conv(self, x, index: int, padding_time: tuple[int, int]):
            """conv2d number `index` with ReLU on NCHW input (H time, W frequency), valid in frequency."""
            padded = F.pad(x, (0, 0, *padding_time))
            return F.relu(F.conv2d(padded, getattr(self, f"kernel{index}"), getattr(self, f"bias{index}")))

        def forward(self, spectrogram):  # (batch, 187, 96) -> (batch, 50) tag probabilities
            x = self.norm(spectrogram.unsqueeze(1), 0, 1)
            front = [self.conv(x, i, (3, 3)) for i in (0, 1)]  # timbral: time padded, frequency valid
            front += [self.conv(x, 2 + i, ((k - 1) // 2, k // 2)) for i, k in enumerate(TEMPORAL_KERNELS)]  # "same"
            front = [self.norm(f, 1 + i, 1).amax(dim=3) for i, f in enumerate(front)]  # (batch, filters, time)
            features = torch.cat(front, dim=1)  # (batch, 561, time)
            layers, current = [features], features.transpose(1, 2).unsqueeze(1)  # (batch, 1, time, 561)
            for i in range(3):
                out = self.norm(self.conv(current, 5 + i, (3, 3)).squeeze(3), 6 + i, 1)  # (batch, 64, time)
                out = out if i == 0 else out + layers[-1]  # the last two are residual
                layers.append(out)
                current = out.transpose(1, 2).unsqueeze(1)
            stacked = torch.cat(layers, dim=1)  # (batch, 753, time)
            pooled = torch.stack([stacked.amax(dim=2), stacked.mean(dim=2)], dim=2).flatten(1)  # max, mean interleaved
            hidden = self.norm(F.relu(self.norm(pooled, 9, 1) @ self.dense0 + self.dense_bias0), 10, 1)
            return torch.sigmoid(hidden @ self.dense1 + self.dense_bias1)

    return Musicnn().eval()


class MusicnnTagger(AudioTagger):
    """Both taggers by default, on one spectrogram; labels are "mtt:piano", "msd:electronic", ..."""

    def __init__(
        self, models: Sequence[str] = ("mtt", "msd"), device: str = "cpu", floor_db: float | None = BAND_FLOOR_DB
    ):
        import torch

        unknown = sorted(set(models) - set(MODELS))
        if unknown or not models:
            raise ConfigError(f"musicnn models are {', '.join(MODELS)}; got {', '.join(unknown) or 'none'}")
        root = package_dir("musicnn", WHAT)
        with needs(WHAT):
            from musicnn import configuration  # constants only: the package's TensorFlow code is never imported
        self._torch = torch
        self._networks = [build_network(read_checkpoint(f"{root / MODELS[m][0]}/")).to(device) for m in models]
        self.labels = tuple(f"{m}:{tag}" for m in models for tag in getattr(configuration, MODELS[m][1]))
        self.model_id, self.device, self.floor_db = f"musicnn:{'+'.join(models)}", device, floor_db

    def unfloored(self) -> MusicnnTagger:
        """The same networks without the band floor: the tagger before issue 46's defence."""
        bare = copy.copy(self)
        bare.floor_db = None
        return bare

    def tag(self, clips: Sequence[Audio]) -> np.ndarray:
        torch, rows = self._torch, []
        with torch.inference_mode():
            for clip in clips:
                heard = log_mel(resample(clip, SAMPLE_RATE).samples, self.floor_db)
                batch = torch.from_numpy(patches(heard)).to(self.device)
                rows.append(torch.cat([net(batch).mean(dim=0) for net in self._networks]).cpu().numpy())
        return np.stack(rows) if rows else np.zeros((0, len(self.labels)), np.float32)

    def warmup(self) -> None:
        self.tag([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
