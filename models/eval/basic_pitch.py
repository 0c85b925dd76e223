"""Polyphonic note transcription with Spotify's basic-pitch model (`basic-pitch` 0.4.0, Apache-2.0):
its ONNX export `basic_pitch/saved_models/icassp_2022/nmp.onnx` (230 KB) on onnxruntime.

Only the model file is used: the package's own inference imports TensorFlow, CoreML or TFLite
when present and decodes notes with pretty_midi and mir_eval, so it installs with --no-deps.

The network takes 22.05 kHz mono in windows of 43,844 samples (2 s less one hop) and gives, per
window, 172 frames (256-sample hops, ~86 per second) x 88 piano keys (MIDI 21-108) of note and
onset activations. Windows overlap by 30 frames; half the overlap is dropped at each side, so
the frames of consecutive windows join up, as the package does.

Notes are decoded here (our reading of the published method, simpler than the package's): an
onset is a local peak in time of a key's onset activation at or above `onset_threshold`; the
note lasts while that key's note activation stays at or above `frame_threshold` (dips of up to
`gap_frames` allowed) and ends at the next onset on the same key. Notes shorter than
`min_note_s` are dropped. A note's confidence is its mean note activation.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import Note, NoteTranscriber
from audionet.models.eval.shipped import package_file
from audionet.models.onnx_providers import providers_for, running_on

SAMPLE_RATE, HOP = 22_050, 256
WINDOW = 43_844
OVERLAP_FRAMES = 30
WINDOW_HOP = WINDOW - OVERLAP_FRAMES * HOP
LOWEST_MIDI = 21  # the first of the 88 keys (A0)
MODEL = "saved_models/icassp_2022/nmp.onnx"
INPUT, NOTE_OUTPUT, ONSET_OUTPUT = "serving_default_input_2:0", "StatefulPartitionedCall:1", "StatefulPartitionedCall:2"
WHAT = "basic-pitch note transcription"


def windows(samples: np.ndarray) -> np.ndarray:
    """(n, WINDOW, 1) the package's windowing: half an overlap of silence first, zero-padded at the end."""
    padded = np.concatenate([np.zeros(OVERLAP_FRAMES * HOP // 2, np.float32), samples.astype(np.float32)])
    starts = range(0, len(padded), WINDOW_HOP)
    cut = [padded[s : s + WINDOW] for s in starts]
    return np.stack([np.pad(w, (0, WINDOW - len(w))) for w in cut])[..., None]


def join(outputs: np.ndarray, samples: int) -> np.ndarray:
    """(frames, 88) activations of the whole clip from (n, 172, 88) windows."""
    half = OVERLAP_FRAMES // 2
    frames = outputs[:, half:-half].reshape(-1, outputs.shape[-1])
    return frames[: int(samples * (SAMPLE_RATE // HOP) / SAMPLE_RATE)]


def decode(
    notes: np.ndarray,
    onsets: np.ndarray,
    *,
    onset_threshold: float = 0.5,
    frame_threshold: float = 0.3,
    min_frames: int = 11,
    gap_frames: int = 11,
) -> list[Note]:
    """Notes from (frames, 88) note and onset activations (see the module docstring)."""
    count = len(notes)
    edged = np.pad(onsets, ((1, 1), (0, 0)))  # a note that starts with the clip peaks in its first frame
    peaks = (edged[1:-1] >= edged[:-2]) & (edged[1:-1] > edged[2:]) & (edged[1:-1] >= onset_threshold)
    found = []
    for key in range(notes.shape[1]):
        starts = np.flatnonzero(peaks[:, key])
        for i, start in enumerate(starts):
            limit = starts[i + 1] if i + 1 < len(starts) else count
            end, below = start, 0
            for frame in range(start + 1, limit):
                if notes[frame, key] >= frame_threshold:
                    end, below = frame, 0
                else:
                    below += 1
                    if below > gap_frames:
                        break
            if end - start + 1 >= min_frames:
                found.append(
                    Note(
                        pitch=LOWEST_MIDI + key,
                        onset_s=float(start * HOP / SAMPLE_RATE),
                        offset_s=(end + 1) * HOP / SAMPLE_RATE,
                        confidence=float(notes[start : end + 1, key].mean()),
                    )
                )
    return sorted(found, key=lambda n: (n.onset_s, n.pitch))


class BasicPitch(NoteTranscriber):
    model_id = "basic-pitch:icassp-2022"

    def __init__(
        self, device: str = "cpu", threads: int | None = None, batch_size: int = 8, min_note_s: float = 0.1277
    ):
        with needs(WHAT):
            import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        providers, used = providers_for(device, "basic-pitch")
        self._session = ort.InferenceSession(
            str(package_file("basic_pitch", MODEL, WHAT)), options, providers=providers
        )
        self.device, self.batch_size = running_on(self._session, used, "basic-pitch"), batch_size
        self.min_frames = max(1, round(min_note_s * SAMPLE_RATE / HOP))

    def activations(self, clip: Audio) -> tuple[np.ndarray, np.ndarray]:
        """(frames, 88) note and onset activations of one clip."""
        samples = resample(clip, SAMPLE_RATE).samples
        cut = windows(samples)
        parts = [
            self._session.run([NOTE_OUTPUT, ONSET_OUTPUT], {INPUT: cut[s : s + self.batch_size]})
            for s in range(0, len(cut), self.batch_size)
        ]
        note, onset = (np.concatenate([p[i] for p in parts]) for i in (0, 1))
        return join(note, len(samples)), join(onset, len(samples))

    def notes(self, clips: Sequence[Audio]) -> list[list[Note]]:
        return [decode(*self.activations(clip), min_frames=self.min_frames) for clip in clips]

    def warmup(self) -> None:
        self.notes([Audio(np.zeros(SAMPLE_RATE, np.float32), SAMPLE_RATE)])
