"""One round's verdicts for people (a rich table) and for programs (a JSON list).

Used by audionet-score. A row per file: the score (what the validator computes
for that answer, and the reward its EMA sees), every component the Judge computed,
and the gates that fired.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from audionet.lib.scoring.jobs import Verdict

CAPTION = "score: 0-1, as the validator computes it for each answer (the reward its EMA sees)"


def records(files: Sequence[str], verdicts: Sequence[Verdict]) -> list[dict]:
    """{file, score, seed, components, gates}: gates holds every gate name -> reason or None; seed is the ASR's
    listening noise's (`--seed` judges the file again exactly)."""
    return [
        {
            "file": path,
            "score": round(verdict.score, 6),
            "seed": verdict.seed,
            "components": {name: round(value, 6) for name, value in verdict.components.items()},
            "gates": dict(verdict.gates),
        }
        for path, verdict in zip(files, verdicts)
    ]


def print_json(service: str, files, verdicts, stream=None) -> None:
    json.dump(records(files, verdicts), stream or sys.stdout, indent=2)
    (stream or sys.stdout).write("\n")


def number(value: float) -> str:
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"  # 0-1 parts and MOS vs bpm


def fired(gates: dict) -> str:
    """The reasons of the gates that fired, each led by the gate's name unless the reason already says it."""
    reasons = [
        reason if reason.startswith(name.replace("_", " ")) else f"{name}: {reason}"
        for name, reason in gates.items()
        if reason
    ]
    return "; ".join(reasons) or "-"


def print_table(service: str, files, verdicts, stream=None) -> None:
    """Two narrow tables rather than one wide one: per file (score, gates), then the
    components with one column per file, so an 80-column terminal still reads them."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console, rows = Console(file=stream or sys.stdout), records(files, verdicts)
    summary = Table(
        title=f"{service}: {len(rows)} file(s) judged as one round",
        caption=CAPTION,
        box=box.SIMPLE_HEAD,
        title_justify="left",
        caption_justify="left",
    )
    for header, justify in (
        ("#", "right"),
        ("file", "left"),
        ("score", "right"),
        ("seed", "right"),
        ("gates fired", "left"),
    ):
        summary.add_column(header, justify=justify, overflow="fold")
    for n, row in enumerate(rows, 1):
        summary.add_row(str(n), row["file"], number(row["score"]), str(row["seed"]), fired(row["gates"]))
    console.print(summary)
    names = list(dict.fromkeys(name for row in rows for name in row["components"]))
    if not names:
        return
    parts = Table(
        title="components by file (-: gated before it was computed)", box=box.SIMPLE_HEAD, title_justify="left"
    )
    parts.add_column("component")
    for n in range(1, len(rows) + 1):
        parts.add_column(f"#{n}", justify="right")
    for name in names:
        parts.add_row(name, *(number(row["components"][name]) if name in row["components"] else "-" for row in rows))
    console.print(parts)
