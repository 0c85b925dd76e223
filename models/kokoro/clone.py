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
reference is not needed. Presets trade speed for similarity:

* fast: the single nearest voice, no pitch matching (plain Kokoro speed);
* balanced (default): the top-k blend, pitch matched by WORLD;
* quality: three candidates (nearest voice, top-k blend, a wider and softer
  top-(k+1) blend), each pitch matched; the one whose d-vector is closest to
  the reference is returned (about 3x the work of balanced).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import VoiceCloner
from audionet.models.baselines.world_vc import move_toward
from audionet.models.kokoro.tts import KokoroSynthesizer, _voices_file, model_file

CALIBRATION_TEXT = (
    "The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. "
    "It is easy to tell the depth of a well."
)
TEMPERATURE = 0.05
DEFAULT_TOP_K = 2


@dataclass(frozen=True)
class ClonePreset:
    # (which blend: "nearest" voice | the spec's top-"k" | "k+1"; temperature scale) per candidate
    candidates: tuple[tuple[str, float], ...]
    match_pitch: bool


SEARCHES = {
    "fast": ClonePreset((("nearest", 1.0),), match_pitch=False),
    "balanced": ClonePreset((("k", 1.0),), match_pitch=True),
    "quality": ClonePreset((("nearest", 1.0), ("k", 1.0), ("k+1", 2.0)), match_pitch=True),
}


def _cache_path() -> str:
    with open(_voices_file(), "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    return os.path.join(os.path.dirname(model_file()), f"dvectors-{digest}.npz")


def blend_weights(similarity: np.ndarray, top_k: int, temperature: float = TEMPERATURE) -> np.ndarray:
    """Softmax over the `top_k` most similar voices, zero for the rest."""
    keep = np.argsort(similarity)[::-1][:top_k]
    weights = np.zeros_like(similarity, dtype=np.float64)
    logits = similarity[keep] / temperature
    weights[keep] = np.exp(logits - logits.max())
    return weights / weights.sum()


class KokoroVoiceCloner(VoiceCloner):
    device = "cpu"

    presets = tuple(SEARCHES)

    def __init__(
        self, top_k: int = DEFAULT_TOP_K, warp_formants: bool = False, preset: str = "balanced", device: str = "cpu"
    ) -> None:
        from audionet.models.eval.speaker_dvector import DVectorEncoder

        if top_k < 1:
            raise BackendError("kokoro-clone: top-k must be at least 1")
        if preset not in SEARCHES:
            raise BackendError(f"unknown kokoro-clone preset {preset!r}; use {', '.join(SEARCHES)}")
        self.preset = preset
        self.tts = KokoroSynthesizer(device=device)
        self.device = self.tts.device  # the speaker d-vector and WORLD stay on the CPU: small, CPU-bound
        self.encoder = DVectorEncoder()
        self.names = sorted(self.tts.voices)
        self.styles = np.stack([self.tts.voices[n] for n in self.names])
        self.top_k = min(top_k, len(self.names))
        self.warp_formants = warp_formants
        self.voice_vectors = self._voice_vectors()
        self.model_id = f"kokoro-clone:{self.top_k}" + ("" if preset == "balanced" else f"/{preset}")

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

    def _similarity(self, vectors: np.ndarray, target: np.ndarray) -> np.ndarray:
        return vectors @ target / (np.linalg.norm(vectors, axis=-1) * np.linalg.norm(target) + 1e-9)

    def style_for(
        self,
        reference: Audio,
        top_k: int | None = None,
        temperature: float = TEMPERATURE,
        target: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The blended style table for `reference` and the per-voice weights."""
        target = self.encoder.embed([reference])[0] if target is None else target
        weights = blend_weights(self._similarity(self.voice_vectors, target), top_k or self.top_k, temperature)
        return np.tensordot(weights, self.styles, axes=1).astype(np.float32), weights

    def _top_k(self, which: str) -> int:
        return {"nearest": 1, "k": self.top_k, "k+1": min(self.top_k + 1, len(self.names))}[which]

    def clone(self, text: str, reference: Audio, reference_text: str, *, seed: int = 0) -> Audio:
        del reference_text, seed  # not needed: the voice comes from the embedding; Kokoro is deterministic
        if not np.isfinite(reference.samples).all() or reference.samples.size == 0:
            raise WireError("reference audio is empty or not finite")
        preset = SEARCHES[self.preset]
        target = self.encoder.embed([reference])[0]
        outputs = []
        for which, scale in preset.candidates:
            style, _ = self.style_for(reference, self._top_k(which), TEMPERATURE * scale, target)
            speech = self.tts.speak_style(text, style)
            outputs.append(move_toward(speech, reference, warp=self.warp_formants) if preset.match_pitch else speech)
        if len(outputs) == 1:
            return outputs[0]
        return outputs[int(np.argmax(self._similarity(self.encoder.embed(outputs), target)))]

    def warmup(self) -> None:
        reference = self.tts.synthesize("Warm up the cloner, please.")
        self.clone("Warm up.", reference, "Warm up the cloner, please.")
