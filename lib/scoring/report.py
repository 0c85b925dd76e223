"""One round's verdicts for people (a rich table) and for programs (a JSON list).

Used by audionet-score. A row per file: raw score (what the validator computes
for that answer alone), round reward (`normalise_round` over the files given
together), every component the Judge computed, and the gates that fired.
"""
from __future__ import annotations

import json
import sys
from typing import Sequence

from lib.scoring.judge import Verdict

CAPTION = ("score: raw 0-1, as the validator computes it for each answer; reward: the within-round "
           "normalisation of the scores given together (0.5 x score + 0.5 x rank)")


def records(files: Sequence[str], verdicts: Sequence[Verdict], rewards: Sequence[float]) -> list[dict]:
    """{file, score, round_reward, components, gates}: gates holds every gate name -> reason or None."""
    return [{"file": path, "score": round(verdict.score, 6), "round_reward": round(reward, 6),
             "components": {name: round(value, 6) for name, value in verdict.components.items()},
             "gates": dict(verdict.gates)}
            for path, verdict, reward in zip(files, verdicts, rewards)]


def print_json(service: str, files, verdicts, rewards, stream=None) -> None:
    json.dump(records(files, verdicts, rewards), stream or sys.stdout, indent=2)
    (stream or sys.stdout).write("\n")


def number(value: float) -> str:
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"  # 0-1 parts and MOS vs bpm


def fired(gates: dict) -> str:
    """The reasons of the gates that fired, each led by the gate's name unless the reason already says it."""
    reasons = [reason if reason.startswith(name.replace("_", " ")) else f"{name}: {reason}"
               for name, reason in gates.items() if reason]
    return "; ".join(reasons) or "-"


def print_table(service: str, files, verdicts, rewards, stream=None) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    names = list(dict.fromkeys(name for verdict in verdicts for name in verdict.components))
    table = Table(title=f"{service}: {len(files)} file(s) judged as one round", caption=CAPTION,
                  box=box.SIMPLE_HEAD, title_justify="left", caption_justify="left")
    table.add_column("file", overflow="fold")
    for header in ("score", "reward", *names):
        # Underscores become spaces so long component names wrap instead of widening the table.
        table.add_column(header.replace("_", " "), justify="right")
    table.add_column("gates fired", overflow="fold")
    for record in records(files, verdicts, rewards):
        parts = record["components"]
        table.add_row(record["file"], number(record["score"]), number(record["round_reward"]),
                      *(number(parts[name]) if name in parts else "-" for name in names), fired(record["gates"]))
    Console(file=stream or sys.stdout).print(table)
