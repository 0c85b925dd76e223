"""The speech half of the judges study: sentences spoken by the best offline TTS (Kokoro), by espeak, the
Kokoro clip band-limited to 8 kHz (resampled down and back up: nothing above 4 kHz) and with white noise
at 10 dB SNR, each judged as a TTS answer to its sentence."""

from __future__ import annotations

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.prompts import make_sentence
from audionet.lib.services import TTS, TTSRequest

CLASSES = ("kokoro", "espeak", "band-limited 8 kHz", "noise 10 dB SNR")


def band_limited(audio: Audio, rate: int = 8_000) -> Audio:
    return resample(resample(audio, rate), audio.sample_rate)


def noisy(audio: Audio, snr_db: float, rng: np.random.Generator) -> Audio:
    power = float(np.mean(audio.samples**2))
    noise = rng.standard_normal(len(audio.samples)) * np.sqrt(power / 10 ** (snr_db / 10))
    return Audio(np.clip(audio.samples + noise, -1.0, 1.0), audio.sample_rate)


def run(judge, sentences: int, seed: int, tick) -> dict:
    """Per class, per sentence: the TTS score and the naturalness and intelligibility parts."""
    from audionet.models.baselines.espeak import EspeakSynthesizer
    from audionet.models.kokoro.tts import KokoroSynthesizer

    rng = np.random.default_rng(seed)
    kokoro, espeak = KokoroSynthesizer(""), EspeakSynthesizer()
    rows = {name: [] for name in CLASSES}
    for n in range(sentences):
        text = make_sentence(rng)
        best = kokoro.synthesize(text, seed=n)
        clips = dict(zip(CLASSES, (best, espeak.synthesize(text, seed=n), band_limited(best), noisy(best, 10, rng))))
        request = TTSRequest(text=text, seed=n)
        for name, clip in clips.items():  # one at a time: in one round, versions of one clip are copies
            (verdict,) = judge.score(TTS.judging, [TTS.job(request, clip, name)], remember=False)
            rows[name].append({"text": text, "score": verdict.score, "gate": verdict.gate, **verdict.parts})
        tick()
    return rows


def findings(rows: dict) -> dict:
    mean = {name: float(np.mean([r["score"] for r in class_rows])) for name, class_rows in rows.items()}
    full, narrow = rows["kokoro"], rows["band-limited 8 kHz"]
    return {
        "mean_score": mean,
        "espeak_over_kokoro": mean["espeak"] / mean["kokoro"] if mean["kokoro"] else None,
        "band_limited_below_full": sum(b["score"] < f["score"] for b, f in zip(narrow, full)),
        "sentences": len(full),
    }
