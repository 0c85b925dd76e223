"""How every study writes what it measured: `<out>/<device-slug>/<name>.{json,md,png}`, with the command
that regenerates it at the top of the Markdown and in the JSON; the one Markdown table and number format;
the one way to save a figure (matplotlib, Agg)."""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Callable
from typing import Optional

RESULTS_DIR = os.path.join("benchmarks", "results")  # under the working directory, never inside the package


def command_line(prog: str, argv: list[str]) -> str:
    """The command that regenerates a result, as a person would type it."""
    return " ".join([prog, *map(shlex.quote, argv)])


def num(value: Optional[float], digits: int = 3) -> str:
    """Fixed digits; small values keep two significant figures instead of printing 0.000."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if value != 0 and abs(value) < 10 ** -(digits - 1):
        return f"{value:.2g}"
    return f"{value:.{digits}f}"


def table(headers: list[str], rows: list[list], note: Optional[str] = None) -> str:
    lines = [f"_{note}_", ""] if note else []
    lines += ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def grouped_bars(ax, groups: list[str], series: list[tuple[str, list[Optional[float]]]], **ticks) -> None:
    """Side by side in each group, one bar per (label, values) series (None: no bar); the group's name under
    its bars."""
    width = 0.8 / max(1, len(series))
    for n, (label, values) in enumerate(series):
        shown = [(j, value) for j, value in enumerate(values) if value is not None]
        ax.bar([j + n * width for j, _ in shown], [value for _, value in shown], width, label=label)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(groups))], groups, **ticks)


def save_figure(fig, path: str) -> str:
    """Write a finished figure as PNG and free it (every benchmark plot ends here)."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path


def write_result(
    out: str,
    slug: str,
    name: str,
    data: dict,
    markdown: str,
    command: str,
    plot: Optional[Callable[[str], object]] = None,
) -> str:
    """`<out>/<slug>/<name>.json` (data and the command), `.md` (the command, then `markdown`) and, with
    `plot(path)`, `.png`; returns the stem and says where it wrote."""
    folder = os.path.join(out, slug)
    os.makedirs(folder, exist_ok=True)
    stem = os.path.join(folder, name)
    with open(stem + ".json", "w") as handle:
        json.dump({"command": command, **data}, handle, indent=1, default=float)
    with open(stem + ".md", "w") as handle:
        handle.write(f"Regenerate: `{command}`\n\n{markdown.rstrip()}\n")
    written = ["json", "md"]
    if plot is not None:
        plot(stem + ".png")
        written.append("png")
    print(f"wrote {stem}.{{{','.join(written)}}}")
    return stem
