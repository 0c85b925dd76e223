"""The Markdown page of a reliability run: one table per scenario (`benchmarks.common.results.table`)."""

from __future__ import annotations

from audionet.benchmarks.common.results import num, table
from tests.stress.report_answers import answers_table
from tests.stress.report_holes import counts, holes_table, kokoro_limit_table, memory_table

GROUPS = ("floods", "generation", "crash")  # scenarios made of several measurements


def latency(figures: dict) -> list[str]:
    return [num(figures.get("p95_s")), num(figures.get("max_s"))]


def hostile_table(r: dict) -> str:
    rows = [[kind, f"{sum(c.values()):,}", counts(c)] for kind, c in r["by_kind"].items()]
    rows.append(["**all**", f"{r['requests']:,}", counts(r["statuses"])])
    summary = table(
        ["5xx answers", "not a 4xx one-line JSON error", "miner crashed", "tracebacks in its log", "p95 s", "max s"],
        [
            [
                r["server_errors"],
                r["not_4xx_one_line_json"],
                r["crashed"],
                r["tracebacks_in_log"],
                *latency(r["latency"]),
            ]
        ],
    )
    return table(["attack", "requests", "statuses"], rows) + "\n" + summary


def concurrent_table(r: dict) -> str:
    rss = r["rss_mb"]
    return table(
        [
            "requests (waves × at once)",
            "statuses",
            "lost",
            "p95 s",
            "max s",
            "timeout s",
            "RSS before MB",
            "RSS after each wave MB",
            "RSS growth MB",
            "queue after",
        ],
        [
            [
                f"{r['requests']} ({r['waves']} × {r['concurrent']})",
                counts(r["statuses"]),
                r["lost"],
                *latency(r["latency"]),
                num(r["timeout_s"], 0),
                num(rss["before"], 1),
                " / ".join(num(v, 1) for v in rss["after_each_wave"]),
                num(rss["growth"], 1),
                f"busy {r['queue_after']['busy']}, waiting {r['queue_after']['waiting']}",
            ]
        ],
    )


def idle_table(r: dict) -> str:
    rows = [
        [probe, r["connections"], counts(r[key]["statuses"]), num(r[key]["median_s"]), num(r[key]["max_s"])]
        for probe, key in (("health", "health"), ("signed TTS request", "signed"))
    ]
    note = f"connections opened in {num(r['opened_s'], 1)} s; miner log lines meanwhile: {r['miner_log_lines']}"
    return table(["probe", "connections held", "statuses", "median s", "max s"], rows, note)


def round_table(r: dict) -> str:
    head = table(
        [
            "miners",
            "honest",
            "queried",
            "timeout s",
            "deadline s",
            "round s",
            "slowest answer s",
            "bad miners > 0",
            "honest answers refused",
            "honest weight",
        ],
        [
            [
                r["miners"],
                r["honest"],
                r["queried"],
                num(r["timeout_s"], 0),
                num(r["deadline_s"], 0),
                num(r["duration_s"], 1),
                num(r["max_latency_s"], 1),
                len(r["bad_nonzero"]),
                len(r["honest_gated"]),
                num(r["honest_weight"], 3),
            ]
        ],
    )
    groups: dict[str, list[dict]] = {}
    for row in r["rows"]:
        groups.setdefault(row["behaviour"], []).append(row)
    rows = [
        [
            behaviour,
            len(items),
            num(max(i["reward"] for i in items)),
            num(max(i["weight"] for i in items)),
            num(max(i["latency_s"] for i in items), 2),
            "; ".join(sorted({str(i["gate"]) for i in items}))[:160],
        ]
        for behaviour, items in groups.items()
    ]
    return head + "\n" + table(["behaviour", "miners", "max reward", "max weight", "max latency s", "gates"], rows)


def crash_table(r: dict) -> str:
    rows = []
    if save := r.get("mid_save"):
        rows.append(
            [
                "validator mid-save",
                f"{save['kills']} kills, {save['landed_mid_write']} inside a write",
                f"{save['state_loads']}/{save['kills']} states load",
                f"{save['scores_exact']}/{save['state_loads']} exactly one saved state",
            ]
        )
    if mid := r.get("mid_round"):
        # Results measured before the validator kept records (issue 33) counted EMAs.
        kind = "records" if "records_not_exact" in mid else "EMAs"
        rows.append(
            [
                "validator mid-round",
                f"after {mid['killed_after_rounds']} round(s), queries in flight",
                f"state round {mid['saved_round']} = rounds logged: {mid['state_matches_log']}",
                f"next round {mid['next_round']}: {mid.get('records_not_exact', mid.get('ema_not_exact'))} of "
                f"{mid['results_checked']} {kind} not exact",
            ]
        )
    if gen := r.get("miner_mid_generation"):
        rows.append(
            [
                "miner mid-generation",
                f"{gen['in_flight']} requests in flight; callers got "
                f"{counts(gen['caller_outcomes'])} within {num(gen['callers_max_wait_s'], 1)} s",
                f"back in {num(gen['restarted_s'], 1)} s; queue busy {gen['queue_after']['busy']}, "
                f"waiting {gen['queue_after']['waiting']}",
                f"old request again: {gen['old_request_replayed']}; fresh: {gen['fresh_request']}",
            ]
        )
    return table(["kill -9 of", "when", "state", "result"], rows)


def floods_table(r: dict) -> str:
    rows = []
    if lock := r.get("lockout"):
        rows.append(
            [
                f"{lock['connections']:,} head-only connections claiming the validator's hotkey, held and refilled "
                f"({lock['opened']:,} opened, from {lock['addresses']} addresses)",
                f"signed TTS served in time: {lock['served_in_time']} of {lock['probes']}",
                f"median {num(lock['latency']['median_s'])} s, max {num(lock['latency']['max_s'])} s "
                f"(timeout {num(lock['timeout_s'], 0)} s)",
            ]
        )
    if health := r.get("health_flood"):
        q, f = health["quiet"], health["flooded"]
        rows.append(
            [
                f"pipelined /v1/health flood: {num(health['health_answers_per_s'], 0)} answers/s "
                f"({counts(health['health_answers'])})",
                f"signed TTS median {num(q['median_s'])} s quiet, {num(f['median_s'])} s flooded",
                f"max {num(q['max_s'])} s quiet, {num(f['max_s'])} s flooded",
            ]
        )
    if head := r.get("big_head"):
        rows.append([f"one send of a {head['head_bytes']:,}-byte head to /v1/health", f"status {head['status']}", "-"])
    return table(["flood", "result", "latency"], rows)


def generation_table(r: dict) -> str:
    parts = []
    texts = {key: r[key] for key in ("overlong_espeak", "overlong_kokoro") if key in r}
    if texts:
        kinds = list(next(iter(texts.values()))["texts"])
        rows = [
            [
                kind,
                *(
                    f"{run['texts'][kind]['status']} in {num(run['texts'][kind]['seconds'])} s"
                    for run in texts.values()
                ),
            ]
            for kind in kinds
        ]
        rows.append(
            [
                "validator (stake 1000) meanwhile",
                *(
                    f"{run['probes_served']} of {run['probes']} served, max {num(run['probe_latency']['max_s'])} s"
                    for run in texts.values()
                ),
            ]
        )
        head = ["400-character text (low-stake caller)", *(k.replace("overlong_", "") for k in texts)]
        parts.append(table(head, rows))
    if gone := r.get("abandon"):
        head = ["generation past --miner.timeout.tts", "answer", "slot free after the answer", "next request"]
        row = [
            f"Kokoro, 380 characters, timeout {num(gone['timeout_s'], 0)} s",
            f"{gone['status']} after {num(gone['answered_after_s'], 2)} s",
            f"{num(gone['slot_free_after_answer_s'], 2)} s (abandoned: {gone['abandoned']})",
            f"{gone['next_status']} in {num(gone['next_s'], 2)} s",
        ]
        parts.append(table(head, [row]))
    if left := r.get("leavers"):
        head = ["callers that leave", "line empty again after", "newcomer (equal stake)", "generated"]
        row = [
            f"{left['leavers']} voice-clone waiters leave after {num(left['leave_after_s'], 1)} s",
            f"{num(left['waiting_zero_after_s'], 2)} s"
            if left["waiting_zero_after_s"] is not None
            else f"not within 10 s ({left['waiting_after_leaving']} still waiting)",
            str(left["newcomer_status"]),
            f"{left['generated']} (the request holding the slot and the newcomer)",
        ]
        parts.append(table(head, [row]))
    if overhead := r.get("overhead"):
        rows = [[size, num(row["mean_ms"], 2), num(row["max_ms"], 2), row["n"]] for size, row in overhead.items()]
        parts.append(table(["burst (one slot, espeak-ng)", "queueing overhead mean ms", "max ms", "requests"], rows))
    return "\n".join(parts)


def soak_table(r: dict) -> str:
    head = table(
        ["rounds", "miners", "answers by gate", "duplicate history", "after warm-up (round)", *SOAK_MEASURES.values()],
        [
            [
                f"{r['completed']:,} of {r['rounds']:,} in {num(r['seconds'], 0)} s",
                f"{r['miners']['honest']} honest, {r['miners']['recyclers']} resending, {', '.join(r['miners']['bad'])}",
                counts(r["gates"]),
                ", ".join(f"{s} {n}" for s, n in r["history"].items()),
                r["warmup"],
                *(
                    f"{num(r[k]['start'], 1)} → {num(r[k]['end'], 1)}; second half {num(r[k]['kb_per_round_second_half'], 2)}"
                    " KB/round"
                    for k in SOAK_MEASURES
                ),
            ]
        ],
    )
    periodic = [s for s in r["samples"] if not s.get("final")]
    step = max(1, len(periodic) // 10)
    curve = periodic[::step] + ([periodic[-1]] if (len(periodic) - 1) % step else [])
    rows = [[s["round"], *(num(s[k], 1) for k in SOAK_MEASURES)] for s in curve]
    return head + "\n" + table(["round", *(f"{v} MB" for v in SOAK_MEASURES.values())], rows)


SOAK_MEASURES = {"rss_mb": "RSS", "heap_mb": "Python heap", "children_mb": "W&B service RSS"}
SECTIONS = (
    ("hostile", "Hostile requests (hypothesis)", hostile_table),
    ("concurrent", "Concurrent valid signed requests", concurrent_table),
    ("idle", "Idle and slow connections held open", idle_table),
    ("floods", "Connections that prove nothing, health floods, big heads", floods_table),
    ("generation", "Over-long text, abandoned generations, callers that leave, queueing overhead", generation_table),
    ("round", "A validator round with bad miners", round_table),
    ("crash", "kill -9", crash_table),
    ("holes", "Issue 37: the top validator's full rounds over a slow link, under each attack", holes_table),
    ("kokoro_limit", "Issue 37: the longest texts the length check accepts, on Kokoro", kokoro_limit_table),
    ("memory", "Issue 37: memory over many requests", memory_table),
    ("soak", "Issue 34: the validator's memory over many rounds", soak_table),
    ("answers", "Issue 45: a validator over hostile answers", answers_table),
)


def render(result: dict) -> str:
    lines = [f"# Reliability: {result['device']}", "", result["machine"], ""]
    for key, title, make in SECTIONS:
        scenario = result["scenarios"].get(key)
        if scenario and "error" in scenario:
            lines += [f"## {title}", "", f"**did not finish**: {scenario['error']}", ""]
        elif scenario:
            lines += [
                f"## {title}",
                "",
                make({k: v for k, v in scenario.items() if "error" not in v} if key in GROUPS else scenario),
            ]
    failures = result.get("failures", [])
    lines += ["## Thresholds", "", "all met" if not failures else "\n".join(f"- FAILED: {f}" for f in failures), ""]
    return "\n".join(lines)
