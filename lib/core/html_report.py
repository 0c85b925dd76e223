"""Self-contained HTML pages: tables, line plots as inline SVG, audio players with the clip inside the page
(a data: URI). One file that opens without a server; no script or style from anywhere else.

The page's one script marks what the browser could not show: an audio element that will not load is
`data-state="broken"` (and says so beside it), a playable one `data-state="playable"`; a plot whose lines
have no extent is `data-drawn="no"`. `body[data-checked]` is set once every clip has answered.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Optional

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
figure { display: inline-block; margin: 0.5em 1em 1em 0; } figcaption { font-weight: bold; }
.broken { color: #d62728; } .gated { color: #d62728; } .same-engine { color: #8c564b; }
"""
SCRIPT = """
const clips = [...document.querySelectorAll('audio')];
let answered = 0;
const done = () => { if (++answered >= clips.length) document.body.dataset.checked = 'yes'; };
for (const clip of clips) {
  const mark = (state) => {
    if (clip.dataset.state) return;
    clip.dataset.state = state;
    if (state === 'broken') clip.insertAdjacentHTML('afterend', ' <span class="broken">cannot play</span>');
    done();
  };
  clip.addEventListener('loadedmetadata', () => mark(clip.duration > 0 ? 'playable' : 'broken'));
  clip.addEventListener('error', () => mark('broken'));
  if (clip.readyState >= 1) mark(clip.duration > 0 ? 'playable' : 'broken');
  clip.load();
}
if (!clips.length) document.body.dataset.checked = 'yes';
for (const plot of document.querySelectorAll('svg.curve')) {
  const drawn = [...plot.querySelectorAll('circle.point')].filter((p) => p.getBBox().width > 0);
  plot.dataset.points = String(drawn.length);
  plot.dataset.drawn = plot.querySelector('polyline.curve').getBBox().width > 0 ? 'yes' : 'no';
}
for (const plot of document.querySelectorAll('svg.plot')) {
  const lines = [...plot.querySelectorAll('polyline')];
  plot.dataset.drawn = lines.length && lines.every((l) => l.getBBox().width > 0) ? 'yes' : 'no';
}
"""


class Markup(str):
    """HTML made here, not to be escaped again."""


def esc(value) -> str:
    return html.escape("" if value is None else str(value))


def cell(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence], text_columns: Sequence[int] = ()) -> str:
    """Cells are escaped; a cell that is already markup is passed as `Markup`."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=text' if i in text_columns else ''}>{c if isinstance(c, Markup) else esc(cell(c))}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def audio(data: bytes, mime: str = "audio/flac") -> Markup:
    encoded = base64.b64encode(data).decode("ascii")
    return Markup(f'<audio controls preload="metadata" src="data:{mime};base64,{encoded}"></audio>')


def line_plot(
    title: str,
    series: dict[str, Sequence[tuple[float, float]]],
    x_label: str,
    y_label: str,
    y_max: Optional[float] = None,
) -> Markup:
    """One polyline per series (a single point is drawn as a short level line), axes with their extremes, and
    a legend; inline SVG."""
    width, height, left, bottom, top, right = 520, 280, 48, 36, 12, 150
    points = [p for values in series.values() for p in values]
    xs, ys = [p[0] for p in points] or [0.0], [p[1] for p in points] or [0.0]
    x0, x1 = min(xs), max(xs)
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y_max if y_max is not None else max(max(ys), 1e-9)

    def at(x: float, y: float) -> str:
        px = left + (x - x0) / (x1 - x0) * (width - left - right)
        py = height - bottom - min(max(y, 0.0), y1) / y1 * (height - bottom - top)
        return f"{px:.1f},{py:.1f}"

    parts = [
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" font-size="10">{y1:g}</text>',
        f'<text x="{left - 4}" y="{height - bottom}" text-anchor="end" font-size="10">0</text>',
        f'<text x="{left}" y="{height - bottom + 14}" font-size="10">{x0:g}</text>',
        f'<text x="{width - right}" y="{height - bottom + 14}" text-anchor="end" font-size="10">{x1:g}</text>',
        f'<text x="{(width - right + left) / 2}" y="{height - 4}" text-anchor="middle" font-size="11">{esc(x_label)}</text>',
        f'<text x="12" y="{top + (height - bottom) / 2}" font-size="11" transform="rotate(-90 12 '
        f'{top + (height - bottom) / 2})" text-anchor="middle">{esc(y_label)}</text>',
    ]
    for n, (name, values) in enumerate(series.items()):
        colour = PALETTE[n % len(PALETTE)]
        drawn = list(values) if len(values) > 1 else [(x - 0.15 * (x1 - x0), y) for x, y in values] + list(values)
        coords = " ".join(at(x, y) for x, y in drawn)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
        parts.append(
            f'<text x="{width - right + 8}" y="{top + 14 * (n + 1)}" font-size="11" fill="{colour}">{esc(name)}</text>'
        )
    svg = (
        f'<svg class="plot" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )
    return Markup(f"<figure><figcaption>{esc(title)}</figcaption>{svg}</figure>")


def curve_plot(title: str, curve, points: dict[str, tuple[float, float]], x_max: float = 1.3) -> Markup:
    """A weight curve (`curve(x)` for relative quality x from 0 to `x_max`, drawn as one polyline) and one
    labelled point per miner on it (`points`: name -> (x, y); x beyond the axis is drawn at its end); inline
    SVG. Each point is a `circle.point` whose <title> is its name."""
    width, height, left, bottom, top, right = 520, 280, 48, 36, 12, 150
    xs = [x / 50 * x_max for x in range(51)]
    ys = [float(curve(x)) for x in xs]
    y1 = max([*ys, *(y for _, y in points.values()), 1e-9])

    def at(x: float, y: float) -> tuple[float, float]:
        px = left + min(max(x, 0.0), x_max) / x_max * (width - left - right)
        return px, height - bottom - min(max(y, 0.0), y1) / y1 * (height - bottom - top)

    line = " ".join("{:.1f},{:.1f}".format(*at(x, y)) for x, y in zip(xs, ys))
    parts = [
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" font-size="10">{y1:.2g}</text>',
        f'<text x="{left}" y="{height - bottom + 14}" font-size="10">0</text>',
        f'<text x="{width - right}" y="{height - bottom + 14}" text-anchor="end" font-size="10">{x_max:g}</text>',
        f'<text x="{(width - right + left) / 2}" y="{height - 4}" text-anchor="middle" font-size="11">'
        "relative quality (bound / reference)</text>",
        f'<polyline class="curve" fill="none" stroke="#444" stroke-width="1.5" points="{line}"/>',
    ]
    for n, (name, (x, y)) in enumerate(points.items()):
        colour = PALETTE[n % len(PALETTE)]
        px, py = at(x, y)
        parts.append(
            f'<circle class="point" cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{colour}"><title>{esc(name)}</title></circle>'
        )
        parts.append(
            f'<text x="{width - right + 8}" y="{top + 14 * (n + 1)}" font-size="11" fill="{colour}">{esc(name)}</text>'
        )
    svg = f'<svg class="curve" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    return Markup(f"<figure><figcaption>{esc(title)}</figcaption>{svg}</figure>")


def page(title: str, sections: Sequence[tuple[str, str]]) -> str:
    """A whole document: the title, then each (heading, markup) section."""
    body = "".join(f"<section><h2>{esc(heading)}</h2>{content}</section>" for heading, content in sections)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f"<style>{STYLE}</style></head><body><h1>{esc(title)}</h1>{body}<script>{SCRIPT}</script></body></html>"
    )
