"""gpu-check's steps, in order of value (issue 44): each an `audionet-bench` study in its own process with its
own time limit, so a step that fails or runs out costs only itself. The steps up to the pool are the issue's;
the ones after it run on what the earlier ones leave. A call skips the steps an earlier call on the same device
finished, so a device's calls add up.

The same plan runs on the CPU as the call's rehearsal (`gpu_plan(rehearsal=True)`): the tests' tiny
random-weight stand-ins, 4 s of music and speech, one run, a shorter Kokoro workload, smaller evaluation rounds
and the pool on `cpu,cpu`; every step takes the code path it takes on the GPU, and its times mean nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

GENERATION, EVALUATION = "generation", "evaluation"  # what a step measures, and so which flags it takes
REHEARSAL_LIMIT_S = 300.0  # each step's limit on the CPU: imports and tiny models on 2 loaded cores
WARMUP_SECONDS = "2"  # the random families warm up on a 2 s request, then time the long one
MUSIC_S, SPEECH_S = "15", "30"  # seed 003's music, and TTS and voice-clone, lengths
REHEARSAL_S = "4"  # the rehearsal's music and speech: the same calls, shorter
# The standard profile's evaluators that are real architectures with random weights (the five, with
# the gates' VAD and music statistics): DistillMOS and DNSMOS ship their weights in packages (38.9 MiB of
# wheels) that do not fit one device call beside the rest; evaluation-offline times DistillMOS where installed.
STANDARD_RANDOM = ("--profiles", "standard", "--eval.mos", "utmos:Blinorot/UTMOS-PyTorch")


@dataclass(frozen=True)
class Step:
    name: str
    limit_s: float  # its own ceiling; what is left of the budget may cut it shorter
    argv: tuple[str, ...]  # the study and its flags (`audionet-bench` ...)
    kind: str = GENERATION
    fits_budget: bool = True  # True: one of the steps; False: an extra, run on the time they leave


def gpu_plan(rehearsal: bool = False) -> list[Step]:
    """The steps on cuda:0 with full-size random-weight stand-ins; `rehearsal`: on the CPU with tiny ones,
    smaller rounds and the rehearsal's limit."""
    device = "cpu" if rehearsal else "cuda:0"
    random = ("--random-size", "tiny" if rehearsal else "full")
    music = ("--music-seconds", REHEARSAL_S if rehearsal else MUSIC_S)
    speech = ("--speech-seconds", REHEARSAL_S if rehearsal else SPEECH_S)
    two = ("--runs", "1" if rehearsal else "2")

    def family(name: str, limit: float, labels: str, *flags: str, warmup: bool = True, extra: bool = False) -> Step:
        """Generation families at full size with random weights, one row each as it finishes (a failed one
        is a row with its reason): time per 15 s of music or 30 s of speech, peak GPU memory."""
        short = ("--warmup-seconds", WARMUP_SECONDS) if warmup else ()
        argv = ("generation", "--pool.devices", device, "--only", labels, "--keep-going", *random, *short, *flags)
        return Step(name, limit, argv, fits_budget=not extra)

    kokoro = ("device-tables", "--pool.devices", device, "--services", "tts", "--tts.model", "kokoro:")
    kokoro += ("--mode", "quick" if rehearsal else "medium", "--runs", "2", "--warmup", "1", "--no-eval")
    kokoro += ("--parallel", "1,2,4", "--sweep-rounds", "1")
    # a round of 8 answers per service judged in one batch; the answers from the install alone (espeak, the
    # WORLD clone, procedural music), the clone references spoken by espeak
    judge = ("evaluators", "--parts", "profiles", "--eval.devices", device)
    judge += ("--clips", "2", "--runs", "1") if rehearsal else ("--clips", "8", "--runs", "2")
    judge += ("--answers", "default", "--vc.reference_tts", "baseline:espeak")
    pool = ("pool", "--pool.devices", f"{device},{device}", "--pool.parallel", "1", "--weights", "random", *random)
    pool += ("--no-eval", "--services", "tts", "--tts.model", "hf:facebook/mms-tts-eng", "--runs", "2")
    pool += ("--warmup", "1", "--parallel", "1,2,4", "--sweep-rounds", "1", "--batches", "1,2,4", "--batch-rounds", "2")
    # Limits from the first H200 calls (2026-11-27, docs/gpu-hosts.md): evaluation-standard finished in 80 s and
    # musicgen-small in 73 s; the others ran out at their old limits (35-110 s) while building or loading full-size
    # random weights, so theirs are at least twice where they were cut. They no longer fit one call together:
    # a call skips what an earlier call on the device finished (main.finished_earlier)
    steps = [
        # never run on a GPU yet (its kit: make gpu-kit-kokoro): assembling the 92 MB model, cuDNN's first
        # shapes and the sweep, given what evaluation-standard's loading took
        Step("kokoro", 90, kokoro),
        Step("evaluation-standard", 120, (*judge, *STANDARD_RANDOM, "--weights", "random", *random), EVALUATION),
        family("musicgen-small", 100, "MusicGen-small", *music, *two),
        family("stable-audio", 90, "Stable Audio", *music, *two),
        family("ace-step", 90, "ACE-Step", *music, *two),
        # two runs: the H200's single runs (35.8 s and 70.0 s) were each the first that long, which cost MusicGen
        # about 30 s more than the next
        family("vc-vibevoice", 150, "VibeVoice", *speech, *two),
        family("vc-csm", 240, "CSM", *speech, *two),
        Step("pool", 60, pool),
        family("musicgen-medium", 120, "MusicGen-medium", *music, *two, extra=True),
        family("vc-more-lms", 240, "Higgs Audio,OmniVoice,Dia,VoxCPM2", *speech, "--runs", "1", extra=True),
        # the miner's own warm-up: a static KV cache and torch.compile of the decoder on CUDA, and a first
        # warm-up as long as the longest request a validator draws (10 s); then the short warm-up, so the first
        # timed 10 s run shows whether the miner's warm-up spared it the first long request's cost. The second
        # H200 session's first try ran out at 120 s while compiling; the next, on the same machine, took 102 s
        family("musicgen-compiled", 210, "MusicGen-small", "--music-seconds", "10", *two, "--miner-warmup", extra=True),
        Step("evaluation-offline", 60, (*judge, "--profiles", "offline"), EVALUATION, fits_budget=False),
    ]
    if rehearsal:
        return [Step(s.name, REHEARSAL_LIMIT_S, s.argv, s.kind, s.fits_budget) for s in steps]
    return steps


def route(extras: list[str]) -> dict[str, list[str]]:
    """Flags gpu-check does not know -> the steps that take them: --eval.* to the evaluation steps, any
    other --<group>.<name> (with its value) to the generation steps. Anything else is a ValueError."""
    routed: dict[str, list[str]] = {GENERATION: [], EVALUATION: []}
    tokens = list(extras)
    while tokens:
        token = tokens.pop(0)
        name = token.split("=", 1)[0]
        if not name.startswith("--") or "." not in name:
            raise ValueError(f"unknown flag {token!r}; steps take --eval.* and --<group>.<name> flags")
        pair = [token] if "=" in token or not tokens or tokens[0].startswith("--") else [token, tokens.pop(0)]
        routed[EVALUATION if name.startswith("--eval.") else GENERATION] += pair
    return routed
