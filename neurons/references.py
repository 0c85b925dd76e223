"""audionet-references: human read-speech reference clips for voice-clone requests.

    audionet-references fetch                 # LibriSpeech test-clean -> ~/.audionet/references/...
    audionet-references fetch --dest DIR --per-speaker 5
    audionet-references verify [DIR]          # every file still matches its manifest checksum

A validator on a real network uses ~/.audionet/references/librispeech-test-clean by default
(or `--vc.references DIR`): recordings of real people, so no cloner wins for resembling the
engine that spoke the reference.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import Parser, Settings, positive_int, setting
from audionet.lib.prompts.corpus import CORPORA, DEFAULT_CORPUS, DEFAULT_DIR

PROG = "audionet-references"


@dataclass(frozen=True)
class FetchSettings(Settings):
    """what to fetch"""

    corpus: str = setting("corpus", DEFAULT_CORPUS, choices=sorted(CORPORA), help="the read-speech corpus")
    dest: str = setting("dest", DEFAULT_DIR, help=f"folder for name.flac + name.txt (default {DEFAULT_DIR})")
    per_speaker: int = setting("per-speaker", 10, type=positive_int, help="clips kept per speaker (3-15 s each)")
    url: Optional[str] = setting("url", None, help="a mirror of the corpus archive (default: the known mirrors)")
    sha256: Optional[str] = setting("sha256", None, help="the archive's sha256 (required with --url)")


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    FetchSettings.add_flags(commands.add_parser("fetch", help="download, check and unpack a corpus"))
    verify = commands.add_parser("verify", help="check every file against the folder's manifest")
    verify.add_argument("dest", nargs="?", default=DEFAULT_DIR)
    return parser


def run_fetch(args) -> int:
    wanted = FetchSettings.from_flags(args)
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    from audionet.lib.prompts.corpus import fetch

    if wanted.url and not wanted.sha256:
        print(f"{PROG}: error: --url needs --sha256 (the archive is only kept when it matches)", file=sys.stderr)
        return 2
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(f"downloading {wanted.corpus}", total=None)
        manifest = fetch(
            wanted.dest,
            wanted.corpus,
            urls=(wanted.url,) if wanted.url else (),
            sha256=wanted.sha256 or "",
            per_speaker=wanted.per_speaker,
            progress=lambda done, total: progress.update(task, completed=done, total=total or None),
        )
    print(f"{manifest['clips']} reference clips in {wanted.dest} ({manifest['licence']})")
    return 0


def run_verify(args) -> int:
    from audionet.lib.prompts.corpus import verify

    bad = verify(args.dest)
    for line in bad:
        print(f"{PROG}: {args.dest}: {line}", file=sys.stderr)
    if not bad:
        print(f"{args.dest}: every file matches its manifest")
    return 1 if bad else 0


def main(argv=None) -> int:
    from audionet.lib.core.errors import ConfigError

    args = build_parser().parse_args(argv)
    try:
        return run_fetch(args) if args.command == "fetch" else run_verify(args)
    except ConfigError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
