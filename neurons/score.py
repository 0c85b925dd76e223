"""audionet-score: score local audio files exactly the way the validator does.

    audionet-score --service tts --text "Hello there." a.wav b.flac
    audionet-score --service vc --text "..." --reference ref.wav --reference-text "..." out.wav
    audionet-score --service music --text "calm piano, 80 bpm" [--seconds 10] clip.ogg

The files are judged as one round by the validator's own Judge (same gates,
duplicate check between the files, same evaluators and `--eval.*` flags); the
raw score needs no other file, the round reward is the validator's within-round
normalisation of those scores. Nothing is remembered between runs.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import os
import sys
import time
from typing import Optional

if __package__ in (None, ""):  # `python neurons/score.py` from a checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.config import flag

PROG = "audionet-score"
EXIT_CODES = """exit status: 0 every file was scored; 1 at least one file could not be read (it is still listed,
score 0, gate 'missing' with the reason); 2 bad usage, a bad --text/--reference, or evaluation models
that cannot be loaded."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0], epilog=EXIT_CODES)
    parser.add_argument("files", nargs="+", metavar="FILE", help="audio files (WAV/FLAC/OGG/..., any rate/channels)")
    flag(parser, "service", required=True, choices=["tts", "vc", "music"], help="which request the files answer")
    flag(parser, "text", required=True, help="the text to speak (tts, vc) or the music prompt (music)")
    flag(parser, "reference", metavar="PATH", help="vc: the reference clip the miner had to clone")
    flag(parser, "reference-text", help="vc: the transcript of --reference")
    flag(parser, "seconds", type=float, help="music: requested length (default: each clip's own, clamped to 1-30 s)")
    flag(parser, "json", action="store_true", help="print a JSON list instead of a table (stdout holds only JSON)")
    from models.eval.registry import add_eval_flags

    add_eval_flags(parser)
    return parser


def make_request(args):
    """The request the files answer, validated like one from the wire (WireError or ValidationError)."""
    from lib.protocol import MIN_MUSIC_SECONDS, MusicRequest, TTSRequest, VCRequest

    if args.service == "tts":
        return TTSRequest(text=args.text)
    if args.service == "music":
        return MusicRequest(prompt=args.text, seconds=MIN_MUSIC_SECONDS if args.seconds is None else args.seconds)
    request = VCRequest(text=args.text, reference_text=args.reference_text,
                        reference_flac_b64=base64.b64encode(reference_flac(args.reference)).decode())
    from lib.errors import WireError

    try:
        request.reference()  # the miner's own check: 1-20 s, size cap
    except WireError as error:
        raise WireError(f"--reference {args.reference}: {error}") from None
    return request


def request_for(request, args, clip_seconds: Optional[float]):
    """Music without --seconds: each clip is judged against its own length (clamped to the protocol's range)."""
    if args.service != "music" or args.seconds is not None or clip_seconds is None:
        return request
    from lib.protocol import MAX_SECONDS, MIN_MUSIC_SECONDS, MusicRequest

    return MusicRequest(prompt=request.prompt, seconds=min(max(clip_seconds, MIN_MUSIC_SECONDS), MAX_SECONDS["music"]))


def reference_flac(path: str) -> bytes:
    from lib.audio import encode_flac
    from lib.audio_files import read_audio_file
    from lib.errors import WireError
    from lib.protocol import REFERENCE_SECONDS
    from lib.scoring.gates import silent

    try:
        reference = read_audio_file(path, max_seconds=REFERENCE_SECONDS[1])
        quiet = silent(reference)  # the validator never sends a silent reference (lib/references.py)
        if quiet:
            raise WireError(quiet)
        return encode_flac(reference)
    except WireError as error:
        raise WireError(f"--reference {path}: {error}") from None


def check_usage(args) -> Optional[str]:
    """Flag combinations argparse cannot express; a one-line reason or None."""
    if args.service == "vc" and not (args.reference and args.reference_text):
        return "--service vc needs --reference PATH and --reference-text"
    if args.service != "vc" and (args.reference or args.reference_text):
        return "--reference and --reference-text are only for --service vc"
    if args.seconds is not None and args.service != "music":
        return "--seconds is only for --service music"
    return None


def load_files(paths, service: str) -> list[tuple[object, Optional[str]]]:
    """(Audio or None, why not) per path; each unreadable file gets one line on stderr."""
    from lib.audio_files import load_audio_file
    from lib.errors import WireError

    loaded = []
    for path in paths:
        try:
            loaded.append((load_audio_file(path, service), None))
        except WireError as error:
            print(f"{PROG}: {path}: {error}", file=sys.stderr)
            loaded.append((None, str(error)))
    return loaded


def load_judge(args):
    from lib.scoring.judge import Judge
    from models.eval.registry import specs_from_args

    started = time.perf_counter()
    with stderr_status("loading evaluation models..."):
        judge = Judge.load(specs_from_args(args), device=args.eval_device)
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


def validated_request(args):
    """(request, None) or (None, one-line problem): flags, text and reference checked before any model loads."""
    from pydantic import ValidationError

    from lib.errors import WireError
    from lib.protocol import one_line

    problem = check_usage(args)
    if problem:
        return None, problem
    try:
        return make_request(args), None
    except WireError as error:
        return None, str(error)
    except ValidationError as error:
        return None, one_line(error).replace("invalid request field", "invalid", 1)


def main(argv=None, judge=None) -> int:
    """`judge`: an already loaded Judge to use instead of loading one from the --eval flags (tests)."""
    from lib.errors import BackendError, ConfigError
    from lib.scoring.judge import Job, normalise_round
    from lib.scoring.report import print_json, print_table

    args = build_parser().parse_args(argv)
    request, problem = validated_request(args)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2

    loaded = load_files(args.files, args.service)
    # Libraries that print must not spoil --json: everything but the report goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        try:
            judge = judge or load_judge(args)
        except (BackendError, ConfigError) as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 2
        models = judge.evaluators.describe()
        print(f"{PROG}: judged by " + ", ".join(f"{k} {v}" for k, v in models.items() if v != "none")
              + f" on {judge.evaluators.device}", file=sys.stderr)
        jobs = [Job(request_for(request, args, audio.seconds if audio else None), audio, path)
                for path, (audio, _) in zip(args.files, loaded)]
        started = time.perf_counter()
        with stderr_status(f"scoring {len(jobs)} file(s)..."):
            verdicts = judge.score(args.service, jobs, remember=False)  # a local check leaves no history
    audio_seconds = sum(audio.seconds for audio, _ in loaded if audio)
    print(f"{PROG}: scored {len(jobs)} file(s), {audio_seconds:.1f} s of audio, in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    for verdict, (_, why) in zip(verdicts, loaded):
        if why:
            verdict.gates["missing"] = f"could not read: {why}"
    rewards = normalise_round([v.score for v in verdicts])
    (print_json if args.json else print_table)(args.service, args.files, verdicts, rewards)
    return 1 if any(why for _, why in loaded) else 0


if __name__ == "__main__":
    sys.exit(main())
