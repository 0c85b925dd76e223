"""localnet.html beside localnet.json: one self-contained page (lib/core/html_report.py) with each miner's
weight by round per service, why each weight is what it is (per service the curve drawn with each miner's point
on it: its estimate, lower bound, the reference, the floor and the weight, and a note where two paid miners run
the same engine), the final table, every clip the validator received with a player, its verdict and its parts
and penalties in words, and the time per answer per service against its timeout."""

from __future__ import annotations

import os
from dataclasses import replace
from statistics import fmean
from typing import Optional

from audionet.lib.core.html_report import Markup, audio, curve_plot, esc, line_plot, page, table
from audionet.lib.validator.incentive import CURVE


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
        ["round", "miner", "service", "clip", "score", "gate", "parts and penalties"],
        [clip_row(r, names, audio_dir) for r in rows],
        (1, 3, 5, 6),
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
            ("Why each weight is what it is", "".join(weight_reasons(report, names, s) for s in services)),
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
    why = row.get("why") or "-"  # the validator's words for the clip's parts and penalties (verdicts.py)
    return [row["round"], names.get(row["uid"], row["uid"]), row["service"], player, row["score"], gate, why]


def weight_reasons(report: dict, names: dict, service: str) -> str:
    """One service's curve with a point per miner, a row per miner saying how its weight follows, and a note
    where paid miners run the same engine."""
    curve = report.get("curve")
    if not curve:
        return f"<p>{esc(service)}: the validator's summary has no curve to explain the weights with</p>"
    floor, reference = curve["floor"], curve["references"].get(service, 0.0)
    validators_curve = replace(CURVE, floor=floor, power=curve["power"])  # as the summary states it

    def shape(relative: float) -> float:
        return float(validators_curve.shape(relative))

    points, rows = {}, []
    for miner in report["miners"]:
        if service not in miner.get("bounds", {}):
            continue
        bound, weight = miner["bounds"][service], miner["weights"].get(service, 0.0)
        relative = bound / reference if reference > 0 else 0.0
        points[names[miner["uid"]]] = (relative, shape(relative))
        why = weight_words(miner["eligible"][service], relative, floor, shape(relative), weight)
        rows.append([names[miner["uid"]], miner["scores"].get(service, 0.0), bound, reference, relative, weight, why])
    plot = curve_plot(f"{service}: weight before normalising, by relative quality (floor {floor:.0%})", shape, points)
    headers = ["miner", "estimate", "lower bound", "reference", "bound / reference", "weight", "why"]
    return plot + table(headers, rows, text_columns=(0, 6)) + same_engine(report, names, service)


def weight_words(eligible: bool, relative: float, floor: float, shaped: float, weight: float) -> Markup:
    if not eligible:
        text = "not eligible yet (too few answers in its record, or its last query failed): weight 0"
    elif relative <= floor:
        text = f"{relative:.0%} of the reference, at or under the floor of {floor:.0%}: weight 0"
    else:
        text = f"{relative:.0%} of the reference, {shaped:.0%} of the way up from the floor: weight {weight:.3f}"
    return Markup(f'<span class="why">{esc(text)}</span>')


def same_engine(report: dict, names: dict, service: str) -> str:
    """A note per engine that two or more miners paid in `service` run (identical backend specs)."""
    paid: dict[str, list[str]] = {}
    for miner in report["miners"]:
        spec = miner.get("models", {}).get(service)
        if spec and miner["weights"].get(service, 0.0) > 0:
            paid.setdefault(spec, []).append(names[miner["uid"]])
    return "".join(
        f'<p class="same-engine">{esc(", ".join(who))} run the same engine for {esc(service)} ({esc(spec)}): their '
        "answers come from one model, so how the weight splits between them is luck</p>"
        for spec, who in paid.items()
        if len(who) > 1
    )


def write(path: str, report: dict, records: list[dict], audio_dir: Optional[str]) -> str:
    with open(path, "w") as handle:
        handle.write(render(report, records, audio_dir))
    return path
