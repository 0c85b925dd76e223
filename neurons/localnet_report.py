"""localnet.html beside localnet.json: one self-contained page (lib/core/html_report.py) with each miner's
weight by round per service, the final table, every clip the validator received with a player and its
verdict, and the time per answer per service against its timeout."""

from __future__ import annotations

import os
from statistics import fmean
from typing import Optional

from audionet.lib.core.html_report import Markup, audio, esc, line_plot, page, table


def clip_path(audio_dir: str, round_: int, uid: int, service: str) -> str:
    """Where the validator's --neuron.save_audio put a clip (lib/validator/loop.py's naming)."""
    return os.path.join(audio_dir, f"round-{round_:05d}", f"uid-{uid:03d}-{service}.flac")


def render(report: dict, records: list[dict], audio_dir: Optional[str]) -> str:
    names = {m["uid"]: f"{m['name']} ({m['backend']})" for m in report["miners"]}
    rows = [r for record in records for r in record["results"]]
    services = list(dict.fromkeys(r["service"] for r in rows))
    uids = sorted(names)
    plots = "".join(
        line_plot(
            f"{service}: weight by round",
            {
                names[uid]: [(r["round"], r["weight"]) for r in rows if (r["uid"], r["service"]) == (uid, service)]
                for uid in uids
            },
            "round",
            "weight in the service",
            y_max=1.0,
        )
        for service in services
    )
    final = table(
        ["uid", "miner", *(f"{s} score / weight" for s in services), "share of emission", "mean latency s"],
        [
            [
                m["uid"],
                names[m["uid"]],
                *(f"{m['scores'].get(s, 0.0):.3f} / {m['weights'].get(s, 0.0):.3f}" for s in services),
                m["emission"],
                m["mean_latency_s"],
            ]
            for m in report["miners"]
        ],
        text_columns=(1,),
    )
    clips = table(
        ["round", "miner", "service", "clip", "score", "gate"], [clip_row(r, names, audio_dir) for r in rows], (1, 3, 5)
    )
    timeouts = {r["service"]: r["timeout_s"] for r in rows}
    latency = {
        (s, uid): [r["latency_s"] for r in rows if (r["uid"], r["service"]) == (uid, s)]
        for s in services
        for uid in uids
    }
    timing = table(
        ["service", "miner", "answers", "mean s", "slowest s", "timeout s"],
        [[s, names[uid], len(t), fmean(t), max(t), timeouts[s]] for (s, uid), t in latency.items() if t],
        text_columns=(0, 1),
    )
    title = f"audionet localnet: {report['rounds']} round(s), {len(report['miners'])} miners"
    return page(
        title,
        [
            ("Weight per miner by round", plots),
            ("Final table", final),
            ("Every clip the validator received", clips),
            ("Time per answer", timing),
        ],
    )


def clip_row(row: dict, names: dict, audio_dir: Optional[str]) -> list:
    path = clip_path(audio_dir, row["round"], row["uid"], row["service"]) if audio_dir else None
    if path and os.path.exists(path):
        with open(path, "rb") as handle:
            player = audio(handle.read())
    else:
        player = Markup("no audio")
    gate = Markup(f'<span class="gated">{esc(row["gate"])}</span>') if row["gate"] else "-"
    return [row["round"], names.get(row["uid"], row["uid"]), row["service"], player, row["score"], gate]


def write(path: str, report: dict, records: list[dict], audio_dir: Optional[str]) -> str:
    with open(path, "w") as handle:
        handle.write(render(report, records, audio_dir))
    return path
