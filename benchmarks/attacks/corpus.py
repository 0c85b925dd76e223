"""The naturalness student's corpus: fresh sentences (seeded), each spoken by Kokoro (a shipped voice or a
random blend of the five, at 0.85-1.2x speed), by espeak (a random voice and seed), and by one of the WORLD
paths (espeak moved toward the Kokoro clip: the espeak cloner; or Kokoro moved toward the espeak clip: the
Kokoro cloner), each clip also once degraded (noise at 15-40 dB SNR, band-limited, tilted, quieter,
requantised); DistillMOS labels every clip. Kept as one .npz, so the student can be trained again without
speaking it again (about an hour on 2 shared cores for 270 sentences)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from audionet.lib.core.audio import Audio, resample

RATE = 16_000
NATURAL, ROBOTIC = ("kokoro", "kokoro cloner"), ("espeak", "espeak cloner")
PEAK = 0.9  # clips are peak-normalised: the perturbation bounds are relative to a full-level clip
DEGRADATIONS = ("noise", "band", "tilt", "quiet", "requantised")


@dataclass
class Corpus:
    clips: list[np.ndarray] = field(default_factory=list)  # 16 kHz, peak PEAK
    engine: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # "" or the degradation's name
    sentence: list[int] = field(default_factory=list)
    mos: list[float] = field(default_factory=list)  # DistillMOS of the clip

    def add(self, samples: np.ndarray, engine: str, degraded: str, sentence: int) -> None:
        peak = float(np.max(np.abs(samples))) or 1.0
        self.clips.append((samples / peak * PEAK).astype(np.float32))
        self.engine.append(engine)
        self.degraded.append(degraded)
        self.sentence.append(sentence)


def degrade(samples: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    from scipy.signal import lfilter

    kind = DEGRADATIONS[int(rng.integers(len(DEGRADATIONS)))]
    if kind == "noise":
        snr = rng.uniform(15, 40)
        noise = rng.standard_normal(len(samples)) * np.sqrt(np.mean(samples**2) / 10 ** (snr / 10))
        return samples + noise, kind
    if kind == "band":
        rate = int(rng.choice([6000, 8000, 11025]))
        return resample(resample(Audio(samples, RATE), rate), RATE).samples, kind
    if kind == "tilt":
        return lfilter([1, -0.9], [1], samples), kind
    if kind == "quiet":
        return samples * rng.uniform(0.05, 0.5), kind
    return np.round(samples * 2**8) / 2**8, kind


def make_corpus(sentences: int, seed: int, tick) -> Corpus:
    from audionet.lib.prompts import make_sentence
    from audionet.models.baselines.espeak import VOICES, EspeakSynthesizer
    from audionet.models.baselines.world_vc import move_toward
    from audionet.models.eval.distillmos import DistillMos
    from audionet.models.kokoro.tts import KokoroSynthesizer

    rng = np.random.default_rng(seed)
    kokoro, espeak = KokoroSynthesizer(""), EspeakSynthesizer()
    names, espeak_voices = sorted(kokoro.voices), sorted(VOICES)
    styles = np.stack([kokoro.voices[name] for name in names])
    corpus = Corpus()
    for n in range(sentences):
        text = make_sentence(rng)
        if n % 2:  # a random blend of the voices at a random speed
            style = np.tensordot(rng.dirichlet(np.full(len(names), 0.5)), styles, axes=1).astype(np.float32)
            natural = kokoro.speak_style(text, style, speed=float(rng.uniform(0.85, 1.2)))
        else:
            natural = kokoro.synthesize(text, voice=names[(n // 2) % len(names)])
        robotic = espeak.synthesize(text, voice=espeak_voices[int(rng.integers(len(espeak_voices)))], seed=n)
        cloned = (
            (move_toward(robotic, natural), "espeak cloner")
            if n % 4 < 2
            else (move_toward(natural, robotic), "kokoro cloner")
        )
        for audio, engine in ((natural, "kokoro"), (robotic, "espeak"), cloned):
            samples = resample(audio, RATE).samples
            corpus.add(samples, engine, "", n)
            worse, kind = degrade(samples, rng)
            corpus.add(worse, engine, kind, n)
        tick()
    mos = DistillMos()
    for start in range(0, len(corpus.clips), 8):
        corpus.mos += mos.predict([Audio(c, RATE) for c in corpus.clips[start : start + 8]])
    return corpus


def save_corpus(corpus: Corpus, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lengths = [len(c) for c in corpus.clips]
    np.savez(
        path,
        audio=np.concatenate(corpus.clips),
        lengths=lengths,
        engine=corpus.engine,
        degraded=corpus.degraded,
        sentence=corpus.sentence,
        mos=corpus.mos,
    )


def load_corpus(path: Path) -> Corpus:
    with np.load(path) as saved:
        audio, bounds = saved["audio"], np.cumsum([0, *saved["lengths"]])
        clips = [audio[a:b].copy() for a, b in zip(bounds[:-1], bounds[1:])]
        return Corpus(
            clips,
            [str(e) for e in saved["engine"]],
            [str(d) for d in saved["degraded"]],
            [int(n) for n in saved["sentence"]],
            [float(m) for m in saved["mos"]],
        )
