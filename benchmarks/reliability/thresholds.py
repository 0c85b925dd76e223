"""The issue's thresholds, one check per scenario; each returns what failed (empty: all met)."""

from __future__ import annotations

RSS_GROWTH_LIMIT_MB = 150.0
IDLE_ANSWER_LIMIT_S = 1.0


def hostile(r: dict, requested: int) -> list[str]:
    failed = []
    if r["requests"] < requested:
        failed.append(f"hostile: only {r['requests']} of {requested} requests were generated")
    if r["crashed"] or r["tracebacks_in_log"]:
        failed.append(f"hostile: miner crashed {r['crashed']}, tracebacks {r['tracebacks_in_log']}")
    if r["server_errors"] or r["not_4xx_one_line_json"]:
        failed.append(
            f"hostile: {r['server_errors']} 5xx, {r['not_4xx_one_line_json']} not a 4xx one-line JSON error "
            f"(first: {r['examples_not_4xx'][:2]})"
        )
    return failed


def concurrent(r: dict) -> list[str]:
    failed = []
    if r["lost"] or not r["alive"]:
        failed.append(f"concurrent: {r['lost']} lost ({r['statuses']}), miner alive {r['alive']}")
    if r["latency"]["max_s"] > r["timeout_s"]:
        failed.append(f"concurrent: slowest answer {r['latency']['max_s']:.1f} s > timeout {r['timeout_s']:g} s")
    if r["rss_mb"]["growth"] > RSS_GROWTH_LIMIT_MB:
        failed.append(f"concurrent: RSS grew {r['rss_mb']['growth']:.0f} MB > {RSS_GROWTH_LIMIT_MB:g} MB")
    if r["queue_after"] != {"busy": 0, "waiting": 0}:
        failed.append(f"concurrent: queue not empty afterwards {r['queue_after']}")
    return failed


def idle(r: dict) -> list[str]:
    failed = []
    for key in ("health", "signed"):
        probe = r[key]
        if set(probe["statuses"]) != {"200"} or probe["max_s"] > IDLE_ANSWER_LIMIT_S:
            failed.append(f"idle: {key} {probe['statuses']}, slowest {probe['max_s']:.2f} s (limit 1 s)")
    if not r["alive"]:
        failed.append("idle: the miner died")
    return failed


def round_(r: dict) -> list[str]:
    failed = []
    if not r["within_deadline"]:
        failed.append(f"round: {r['duration_s']:.1f} s > deadline {r['deadline_s']:g} s")
    if r["max_latency_s"] > r["timeout_s"] + 1.0:
        failed.append(f"round: an answer took {r['max_latency_s']:.1f} s, timeout {r['timeout_s']:g} s")
    if r["queried"] != r["miners"]:
        failed.append(f"round: {r['queried']} of {r['miners']} miners queried")
    if r["bad_nonzero"]:
        failed.append(f"round: bad miners above 0 {r['bad_nonzero']}")
    if r["honest_gated"] or r["honest_weight"] <= 0:
        failed.append(f"round: honest answers refused {r['honest_gated']}, honest weight {r['honest_weight']:g}")
    return failed


def crash(r: dict) -> list[str]:
    failed = []
    if save := r.get("mid_save"):
        if save["state_loads"] != save["kills"] or save["scores_exact"] != save["state_loads"]:
            failed.append(f"mid-save: {save}")
    if mid := r.get("mid_round"):
        if not mid["state_matches_log"] or mid["restart_exit"] != 0 or mid["ema_not_exact"] != 0:
            failed.append(f"mid-round: {mid}")
    if gen := r.get("miner_mid_generation"):
        if (
            not gen["killed_mid_generation"]
            or gen["callers_hung"]
            or gen["old_request_replayed"] != 401
            or gen["fresh_request"] != 200
        ):
            failed.append(f"miner mid-generation: {gen}")
        if gen["queue_after"] != {"busy": 0, "waiting": 0}:
            failed.append(f"miner mid-generation: queue after restart {gen['queue_after']}")
    return failed
