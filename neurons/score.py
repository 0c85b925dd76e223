"""audionet-score: score local audio files exactly the way the validator does.

    audionet-score --service tts --text "Hello there." a.wav b.flac
    audionet-score --service vc --text "..." --reference ref.wav --reference-text "..." out.wav
    audionet-score --service music --text "calm piano, 80 bpm" [--seconds 10] clip.ogg

The files are judged as one round by the validator's own Judge (same gates,
duplicate check between the files, same evaluators and `--eval.*` flags); a
file's score needs no other file and is the reward the validator's EMA would see.
Nothing is remembered between runs.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import Parser, Settings, setting
from audionet.lib.services import registry

PROG = "audionet-score"
EXIT_CODES = """exit status: 0 every file was scored; 1 at least one file could not be read (it is still listed,
score 0, gate 'missing' with the reason); 2 bad usage, a bad --text/--reference, or evaluation models
that cannot be loaded."""


def takers(field: str) -> str:
    """The services whose requests take `field` (a Prompt field), for help and errors."""
    return "/".join(s.name for s in registry.all_services() if field in s.inputs) or "no service"


def service_name(text: str) -> str:
    """argparse type: a registered service (checked when parsed: a service registered later is known)."""
    if text not in registry.names():
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(registry.names())})")
    return text


@dataclass(frozen=True)
class ScoreSettings(Settings):
    """what the files answer"""

    files: tuple[str, ...] = ()
    service: str = setting("service", None, required=True, type=service_name, help="which request the files answer")
    text: str = setting(
        "text", None, required=True, help="; ".join(f"{s.name}: {s.text_help}" for s in registry.all_services())
    )
    reference: Optional[str] = setting(
        "reference", None, metavar="PATH", help=f"the reference clip the miner had to clone ({takers('reference')})"
    )
    reference_text: Optional[str] = setting("reference-text", None, help="the transcript of --reference")
    seconds: Optional[float] = setting(
        "seconds",
        None,
        type=float,
        help=f"the requested length ({takers('seconds')}; default: each clip's own, clamped to the service's range)",
    )
    seed: Optional[int] = setting(
        "seed",
        None,
        type=int,
        help="the seed of the ASR's listening noise for every file (a verdict row's `seed` reproduces that verdict; "
        "default: a fresh one per file, printed)",
    )
    json: bool = setting(
        "json", False, action="store_true", help="print a JSON list instead of a table (stdout holds only JSON)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__.split("\n")[0], epilog=EXIT_CODES)
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files (WAV/FLAC/OGG/..., any rate/channels)")
    ScoreSettings.add_flags(parser)
    from audionet.models.eval.profiles import add_eval_flags

    add_eval_flags(parser)
    return parser


def make_request(service, asked: ScoreSettings, clip_seconds: Optional[float] = None):
    """The request the files answer, through the service's own factory (WireError, one line).
    A length-taking service without --seconds judges each clip against its own length."""
    from audionet.lib.services import Prompt

    seconds = asked.seconds
    if "seconds" in service.inputs and seconds is None:
        low, high = service.seconds_range
        seconds = low if clip_seconds is None else min(max(clip_seconds, low), high)
    reference = reference_of(asked) if "reference" in service.inputs else None
    return service.request(Prompt(asked.text, seconds=seconds, reference=reference))


def reference_of(asked):
    """--reference and --reference-text as a Reference, loaded by the validator's own clip loader."""
    from audionet.lib.core.audio_files import load_reference_clip
    from audionet.lib.core.errors import WireError
    from audionet.lib.prompts.references import Reference

    try:
        audio = load_reference_clip(asked.reference)
    except WireError as error:
        raise WireError(f"--reference {asked.reference}: {error}") from None
    return Reference("reference", audio, asked.reference_text)


def check_usage(service, asked) -> Optional[str]:
    """Flag combinations argparse cannot express; a one-line reason or None."""
    if "reference" in service.inputs and not (asked.reference and asked.reference_text):
        return f"--service {service.name} needs --reference PATH and --reference-text"
    if "reference" not in service.inputs and (asked.reference or asked.reference_text):
        return f"--reference and --reference-text are only for --service {takers('reference')}"
    if asked.seconds is not None and "seconds" not in service.inputs:
        return f"--seconds is only for --service {takers('seconds')}"
    return None


def load_files(paths, service) -> list[tuple[object, Optional[str]]]:
    """(Audio or None, why not) per path; each unreadable file gets one line on stderr."""
    from audionet.lib.core.audio_files import load_answer_file
    from audionet.lib.core.errors import WireError

    loaded = []
    for path in paths:
        try:
            loaded.append((load_answer_file(path, service.answer_limit_s), None))
        except WireError as error:
            print(f"{PROG}: {path}: {error}", file=sys.stderr)
            loaded.append((None, str(error)))
    return loaded


def load_judge(args):
    from audionet.lib.scoring.judge import Judge
    from audionet.models.eval.profiles import EvalSettings

    started = time.perf_counter()
    with stderr_status("loading evaluation models..."):
        judge = Judge.load(EvalSettings.from_flags(args).specs(), devices=args.eval_devices)
    print(f"{PROG}: models loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return judge


@contextlib.contextmanager
def stderr_status(message: str):
    """A spinner on stderr while something slow runs (plain line when stderr is not a terminal)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        print(f"{PROG}: {message}", file=sys.stderr)
        yield
        return
    with console.status(message):
        yield


def validated_request(service, asked):
    """(request, None) or (None, one-line problem): flags, text and reference checked before any model loads."""
    from audionet.lib.core.errors import WireError

    problem = check_usage(service, asked)
    if problem:
        return None, problem
    try:
        return make_request(service, asked), None
    except WireError as error:
        return None, str(error).replace("invalid request field", "invalid", 1)


def main(argv=None, judge=None) -> int:
    """`judge`: an already loaded Judge to use instead of loading one from the --eval flags (tests)."""
    from audionet.lib.core.errors import BackendError, ConfigError
    from audionet.lib.core.torch_build import check_torch_pair
    from audionet.lib.scoring.report import print_json, print_table

    args = build_parser().parse_args(argv)
    asked = ScoreSettings.from_flags(args, files=tuple(args.files))
    service = registry.get(asked.service)
    request, problem = validated_request(service, asked)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2

    loaded = load_files(asked.files, service)
    # Libraries that print must not spoil --json: everything but the report goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            check_torch_pair()
            judge = judge or load_judge(args)
        except (BackendError, ConfigError) as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 2
        models = judge.evaluators.describe()
        print(
            f"{PROG}: judged by "
            + ", ".join(f"{k} {v}" for k, v in models.items() if v != "none")
            + f" on {judge.evaluators.device}",
            file=sys.stderr,
        )
        per_clip = "seconds" in service.inputs and asked.seconds is None  # each clip asked for its own length
        jobs = [
            service.job(
                make_request(service, asked, audio.seconds) if audio and per_clip else request,
                audio,
                path,
                seed=asked.seed,  # None: the Judge draws each file's
            )
            for path, (audio, _) in zip(asked.files, loaded)
        ]
        started = time.perf_counter()
        with stderr_status(f"scoring {len(jobs)} file(s)..."):
            verdicts = judge.score(service.judging, jobs, remember=False)  # a local check leaves no history
    audio_seconds = sum(audio.seconds for audio, _ in loaded if audio)
    print(
        f"{PROG}: scored {len(jobs)} file(s), {audio_seconds:.1f} s of audio, in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    for verdict, (_, why) in zip(verdicts, loaded):
        if why:
            verdict.gates["missing"] = f"could not read: {why}"
    (print_json if asked.json else print_table)(asked.service, asked.files, verdicts)
    return 1 if any(why for _, why in loaded) else 0


if __name__ == "__main__":
    sys.exit(main())
