"""The Markdown tables of issue 37's scenarios (`holes`, `kokoro_limit`, `memory`) in a reliability run."""

from __future__ import annotations

from audionet.benchmarks.common.results import num, table

ATTACKS = {
    "verified_hog": "a low-stake validator's connections, each verified by a refused request, then a voice-clone head"
    " with no body",
    "parse_stream": "a low-stake validator streams 400-character CJK texts the length check refuses",
    "partial_heads": "one partial head from each of many addresses, refilled",
    "churn": "new connections from fresh addresses, each sending nothing",
    "health_flood": "unsigned /v1/health pipelined from many addresses",
}


def counts(statuses: dict) -> str:
    return ", ".join(f"{key}: {value:,}" for key, value in statuses.items()) or "-"


def attack_text(name: str, attack: dict) -> str:
    if "rate_per_s" in attack:
        return f"{ATTACKS[name]}: {num(attack['rate_per_s'], 0)}/s ({attack['opened']:,} opened)"
    if "streams" in attack:
        rate = num(attack["per_s"], 0) if attack["per_s"] else "-"
        return f"{ATTACKS[name]}: {attack['streams']} streams, {rate} requests/s ({counts(attack['statuses'])})"
    return (
        f"{ATTACKS[name]}: {attack['connections']:,} held ({attack['opened']:,} opened; {counts(attack['statuses'])})"
    )


def places_text(places: dict) -> str:
    """Each validator's most held connections and line places against its entitlement."""
    rows = []
    for hotkey, row in sorted(places.get("most", {}).items(), key=lambda kv: -kv[1]["share"]):
        rows.append(
            f"{hotkey[:6]} ({num(row['share'] * 100, 2)} %): conns {row['connections']}/{row['connections_entitled']},"
            f" line {row['line']}/{row['line_entitled']}"
        )
    return "; ".join(rows) or "not reported (no places in health)"


def holes_table(r: dict) -> str:
    rows = []
    for name in ATTACKS:
        row = r.get(name)
        if row is None:
            continue
        if "error" in row:
            rows.append([name, f"did not finish: {row['error']}", "-", "-", "-", "-"])
            continue
        top = row["top"]
        longest = ", ".join(f"{s} {num(v, 2)}" for s, v in row["longest_s"].items())
        first = row.get("first_contact")
        note = ""
        if first and first["rounds"]:
            second = first.get("from_second_round") or {"complete": "-", "rounds": "-"}
            note = f"; first contact: {first['complete']}/{first['rounds']} ({second['complete']}/{second['rounds']} second rounds)"
        rows.append(
            [
                attack_text(name, row["attack"]),
                f"**{top['complete']}/{top['rounds']}** (median {num(top['median_s'], 2)} s, max {num(top['max_s'], 2)} s)"
                + note,
                "; ".join(f"{s}: {counts(c)}" for s, c in top["statuses"].items()),
                places_text(row["places"]),
                longest,
                f"{row['places']['samples']}, {row['places']['failed']}, {num(row['places'].get('slowest_s'), 2)}",
            ]
        )
    head = [
        "attack",
        "top validator's full rounds complete",
        "its answers",
        "most held (connections, line places) / entitled",
        "longest generation s",
        "operator's signed health (answered, failed, slowest s)",
    ]
    parts = [table(head, rows)]
    if burst := r.get("burst"):
        parts.append(
            table(
                ["the top validator's burst from one address", "answers", "lost (resets, errors)"],
                [[f"{burst['requests']} TTS at once", counts(burst["statuses"]), burst["lost"]]],
            )
        )
    if miner := r.get("miner"):
        parts.append(f"Miner alive: {miner['alive']}; tracebacks in its log: {miner['tracebacks']}.\n")
    parts.append(findings_table(r))
    return "\n".join(parts)


def findings_table(r: dict) -> str:
    rows = []
    if silence := r.get("silence"):
        rows.append(["text that speaks as silence", ", ".join(f"{k}: {v}" for k, v in silence.items())])
    if voices := r.get("voices"):
        rows.append(
            [
                f"a text at the limit in every voice and seed ({voices['pairs']} pairs)",
                f"{counts(voices['statuses'])}; slowest {num(voices['slowest_s'], 2)} s",
            ]
        )
    if minor := r.get("minor"):
        rows.append(["a signed voice clone with bare LF line endings, one send", minor["bare_lf_voice_clone"]])
        rows.append(["a chunked body with 20 KB of trailers", minor["chunked_trailers_20kb"]])
        for kind, message in minor["references"].items():
            rows.append([f"a reference FLAC: {kind}", message])
    return table(["finding", "answer"], rows) if rows else ""


def kokoro_limit_table(r: dict) -> str:
    rows = [
        [f"{kind} ({row['chars']} characters)", f"{row['status']} in {num(row['seconds'], 1)} s"]
        for kind, row in r["texts"].items()
    ]
    rows.append(
        [
            "the top validator's TTS meanwhile",
            f"{r['probes_served']} of {r['probes']} served, max {num(r['probe_max_s'], 1)} s",
        ]
    )
    rows.append(["longest generation (slot held)", f"{num(r['longest_s'], 2)} s (timeout {num(r['timeout_s'], 0)} s)"])
    return table(["the longest text the length check accepts, on Kokoro", "answer"], rows)


def memory_table(r: dict) -> str:
    points = " / ".join(f"{n:,}: {num(mb, 1)}" for n, mb in zip(r["at"], r["rss_mb"]))
    return table(
        ["requests", "answers", "RSS MB after n requests", "growth MB", "KB/request first half", "second half"],
        [
            [
                f"{r['requests']:,} in {num(r['seconds'], 0)} s",
                counts(r["statuses"]),
                points,
                num(r["growth_mb"], 1),
                num(r["kb_per_request_first_half"], 2),
                num(r["kb_per_request_second_half"], 2),
            ]
        ],
    )
