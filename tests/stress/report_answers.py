"""The Markdown table of issue 45's scenario (`answers.py`): a real validator over honest and hostile miners."""

from __future__ import annotations

from audionet.benchmarks.common.results import num, table

TITLES = {
    "baseline": "honest miners alone",
    "gzip_bomb_1": "a `gzip, gzip` bomb (1.8 KB, 1 GiB inflated)",
    "bombs_n": "bombs of every kind",
    "compressed_n": "gzip answers (64 KB sent, 64 MB inflated)",
    "slow_link": "an honest signed answer at 50 KB/s (800 KB, 16 s)",
    "plain_n": "plain signed health (the control for the next)",
    "fat_health_n": "signed health listing 250 KB of services (heap vs the control)",
    "log_injection": "escape sequences and a forged log line",
}


def answers_table(r: dict) -> str:
    rows = []
    for name, row in r.items():
        title = TITLES.get(name, name)
        if "error" in row:
            rows.append([title, f"did not finish: {row['error']}", *["-"] * 6])
            continue
        hostile = sum(row["hostile"].values())
        honest = row["honest"]
        reasons = row.get("hostile_reasons", {})
        gates = "; ".join(f"{g} ×{n} ({reasons.get(g, '')[:100]})" for g, n in row["hostile_gates"].items()) or "-"
        rows.append(
            [
                f"{title} ({hostile} hostile)" if hostile else title,
                f"{row['completed']}/{row['rounds']}, failed {row['failed_rounds']}, tracebacks {row['tracebacks']}",
                f"{honest['judged']}/{honest['answers']}" + (" (every round)" if honest["every_round"] else ""),
                "yes" if row["weights_set"] else "**no**",
                f"{num(row['peak_mb'], 0)} ({num(row.get('peak_vs_baseline'), 2)}×)",
                f"{num(row['heap_after_mb'], 1)} ({row.get('heap_kept_mb', 0):+.1f})",
                f"{row['log_control_characters']} / {row['log_forged_lines']} / {row['verdict_control_characters']}",
                gates,
            ]
        )
    head = [
        "phase",
        "rounds complete",
        "honest answers judged",
        "weights set",
        "validator peak MB (vs baseline)",
        "Python heap after MB (vs baseline)",
        "control characters in log / forged log lines / in verdicts",
        "hostile answers gated",
    ]
    return table(head, rows)
