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
        failed += [f"{name}'s log ends:\n{log}" for name, log in r.get("honest_logs", {}).items()]
    return failed


def crash(r: dict) -> list[str]:
    failed = []
    if save := r.get("mid_save"):
        if save["state_loads"] != save["kills"] or save["scores_exact"] != save["state_loads"]:
            failed.append(f"mid-save: {save}")
    if mid := r.get("mid_round"):
        if not mid["state_matches_log"] or mid["restart_exit"] != 0 or mid["records_not_exact"] != 0:
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


HEALTH_FLOOD_SLOWDOWN_S = 0.1  # signed TTS median under the /v1/health flood, at most this much over quiet
SLOT_FREED_LIMIT_S = 1.0  # an abandoned Kokoro generation frees its slot within one ONNX operator
QUEUE_OVERHEAD_LIMIT_MS = 20.0


def floods(r: dict) -> list[str]:
    failed = []
    if lock := r.get("lockout"):
        if lock["served_in_time"] != lock["probes"] or not lock["alive"]:
            failed.append(f"lockout: {lock['served_in_time']} of {lock['probes']} served ({lock['statuses']})")
        if lock["latency"]["max_s"] > lock["timeout_s"]:
            failed.append(f"lockout: slowest {lock['latency']['max_s']:.1f} s > timeout {lock['timeout_s']:g} s")
    if health := r.get("health_flood"):
        quiet, flooded = health["quiet"], health["flooded"]
        if flooded["statuses"] != ["200"] or flooded["median_s"] > quiet["median_s"] + HEALTH_FLOOD_SLOWDOWN_S:
            failed.append(f"health flood: signed TTS {flooded} under the flood, {quiet} without")
    if (head := r.get("big_head")) and head["status"] != "431":
        failed.append(f"big head: {head}")
    return failed


def generation(r: dict) -> list[str]:
    failed = []
    for key in ("overlong_espeak", "overlong_kokoro"):
        if run := r.get(key):
            wrong = {kind: t["status"] for kind, t in run["texts"].items() if t["status"] != 400}
            if wrong or run["probes_served"] != run["probes"] or run["probe_latency"]["max_s"] > run["timeout_s"]:
                failed.append(f"{key}: not 400 {wrong}; probes {run['probes_served']} of {run['probes']} in time")
    if (gone := r.get("abandon")) and (
        gone["status"] != 503 or gone["slot_free_after_answer_s"] > SLOT_FREED_LIMIT_S or gone["next_status"] != 200
    ):
        failed.append(f"abandon: {gone}")
    if (left := r.get("leavers")) and (
        left["waiting_zero_after_s"] is None or left["newcomer_status"] != 200 or left["generated"] != 2
    ):
        failed.append(f"leavers: {left}")
    if overhead := r.get("overhead"):
        worst = max(row["mean_ms"] for row in overhead.values())
        if worst > QUEUE_OVERHEAD_LIMIT_MS:
            failed.append(f"overhead: {worst:.1f} ms per request > {QUEUE_OVERHEAD_LIMIT_MS:g} ms")
    return failed


ROUNDS_COMPLETE = 0.95  # of the top validator's full rounds, under each attack
FIRST_CONTACT_COMPLETE = 0.9  # of a new validator's rounds under the churn, from its second (issue 45)
STOP_SLACK_S = 1.0  # a generation stopped at its timeout frees its slot within this


def _no_500(statuses) -> bool:
    return not any(str(status).startswith("5") and str(status) != "503" for status in statuses)


def holes(r: dict) -> list[str]:
    from tests.stress.holes import SCENARIOS
    from tests.stress.wan import TIMEOUTS

    failed = []
    for name in SCENARIOS:
        row = r.get(name)
        if row is None:
            continue
        if "error" in row:
            failed.append(f"{name}: {row['error']}")
            continue
        top = row["top"]
        if top["complete"] < ROUNDS_COMPLETE * top["rounds"]:
            failed.append(f"{name}: the top validator completed {top['complete']} of {top['rounds']} rounds")
        if row["places"]["over_share"]:
            failed.append(f"{name}: held more than the stake share {row['places']['over_share']}")
        if row["places"]["failed"]:
            failed.append(f"{name}: the operator's signed health failed {row['places']['failed']} times")
        answers = [s for per_service in top["statuses"].values() for s in per_service]
        if not _no_500([*row["attack"].get("statuses", {}), *answers]):
            failed.append(f"{name}: a 5xx other than 503 ({row['attack'].get('statuses')}, {top['statuses']})")
        for service, longest in row["longest_s"].items():
            if longest > TIMEOUTS[service] + STOP_SLACK_S:
                failed.append(f"{name}: a {service} generation held its slot {longest:.1f} s")
    first = (r.get("churn") or {}).get("first_contact") or {}
    second = first.get("from_second_round") or {"rounds": 0}
    if second["rounds"] and second["complete"] < FIRST_CONTACT_COMPLETE * second["rounds"]:
        failed.append(f"churn: new validators completed {second['complete']} of {second['rounds']} second rounds")
    if (burst := r.get("burst")) and burst["lost"]:
        failed.append(f"burst: {burst['lost']} of {burst['requests']} lost ({burst['statuses']})")
    if (miner := r.get("miner")) and (not miner["alive"] or miner["tracebacks"]):
        failed.append(f"miner: alive {miner['alive']}, tracebacks {miner['tracebacks']}")
    if (silence := r.get("silence")) and set(silence.values()) != {"400"}:
        failed.append(f"silence: {silence}")
    if (voices := r.get("voices")) and not set(voices["statuses"]) <= {"200", "400", "503"}:
        failed.append(f"voices and seeds: {voices['statuses']}")
    if minor := r.get("minor"):
        expected = {"bare_lf_voice_clone": "HTTP/1.1 200", "chunked_trailers_20kb": "HTTP/1.1 411"}
        failed += [f"minor: {key} {minor[key]}" for key, want in expected.items() if minor[key] != want]
        failed += [f"minor: {k} {m}" for k, m in minor["references"].items() if not m.startswith("400 ")]
    return failed


def kokoro_limit(r: dict) -> list[str]:
    failed = []
    if not _no_500(t["status"] for t in r["texts"].values()) or not r["alive"]:
        failed.append(f"kokoro at the limit: {r['texts']}, alive {r['alive']}")
    if r["probes_served"] != r["probes"]:
        failed.append(f"kokoro at the limit: the top validator {r['probes_served']} of {r['probes']} served in time")
    if r["longest_s"] is not None and r["longest_s"] > r["timeout_s"] + STOP_SLACK_S:
        failed.append(f"kokoro at the limit: a generation held its slot {r['longest_s']:.1f} s")
    return failed


def memory(r: dict) -> list[str]:
    lost = r["requests"] - sum(r["statuses"].get(s, 0) for s in ("200", "429", "503"))
    return [f"memory: {lost} requests not answered ({r['statuses']})"] if lost else []


# The soak (issue 34): after the warm-up, the growth of a line through the second half of the samples may be the
# jitter of one sample (what is allocated between rounds at the moment of sampling) plus a rate per round. The
# Python heap's rate: 4 MB per 1,000 rounds (about 3 h at 12 s a round), a few hundred bytes per answer kept.
# RSS between rounds moves by up to 130 MB peak to peak here (glibc's arenas keep what the judging threads, the
# 30 s music clips and the 8 MB oversized answers freed), so its check catches only gross growth; the heap's is
# the fine one.
SOAK_LIMITS = {"heap_mb": (2.0, 4.0), "rss_mb": (64.0, 24.0)}  # measure -> (jitter MB, KB per round)


def soak(r: dict) -> list[str]:
    from audionet.lib.scoring.duplicates import HISTORY_SIZE

    failed = []
    if r["completed"] < r["rounds"] or r["exit"] != 0 or r["failed_rounds"] or r["tracebacks"]:
        failed.append(
            f"soak: {r['completed']} of {r['rounds']} rounds, exit {r['exit']}, {r['failed_rounds']} rounds failed, "
            f"{r['tracebacks']} tracebacks"
        )
    for key, (jitter, rate) in SOAK_LIMITS.items():
        fit = r[key]
        span = fit["second_half_rounds"]
        grown, allowed = fit["kb_per_round_second_half"] * span / 1024, jitter + rate * span / 1024
        if grown > allowed:
            failed.append(f"soak: {key} grew {grown:.1f} MB over the last {span} rounds (at most {allowed:.1f})")
    if not r["history"] or min(r["history"].values()) < HISTORY_SIZE or not r["gates"].get("duplicate"):
        failed.append(f"soak: the duplicate history {r['history']} (bound {HISTORY_SIZE}), gates {r['gates']}")
    return failed


# Issue 45: a validator over hostile answers (`answers.py`).
PEAK_VS_BASELINE = 1.5  # the validator's peak memory under bombs, against the same validator over honest miners
HONEST_JUDGED = 0.95  # of the honest answers, under a hundred compressed answers
HEALTH_KEPT_MB = 50.0  # what 256 miners' health answers leave in the validator's heap


def answers(r: dict) -> list[str]:
    failed = []
    for name, row in r.items():
        if "error" in row:
            failed.append(f"answers {name}: {row['error']}")
            continue
        if row["completed"] < row["rounds"] or row["exit"] or row["failed_rounds"] or row["tracebacks"]:
            failed.append(
                f"answers {name}: {row['completed']} of {row['rounds']} rounds, exit {row['exit']},"
                f" {row['failed_rounds']} failed, {row['tracebacks']} tracebacks"
            )
        if not row["weights_set"]:
            failed.append(f"answers {name}: no weights set for the honest miners")
        honest = row["honest"]
        if name == "compressed_n":
            if honest["judged"] < HONEST_JUDGED * honest["answers"]:
                failed.append(f"answers {name}: {honest['judged']} of {honest['answers']} honest answers judged")
        elif not honest["every_round"]:
            failed.append(f"answers {name}: honest miners not judged every round ({honest})")
        if name in ("gzip_bomb_1", "bombs_n") and row.get("peak_vs_baseline", 0) > PEAK_VS_BASELINE:
            failed.append(f"answers {name}: peak memory {row['peak_vs_baseline']}x the baseline's")
        if name == "fat_health_n" and row.get("heap_kept_mb", 0) > HEALTH_KEPT_MB:
            failed.append(f"answers {name}: {row['heap_kept_mb']} MB kept")
        if name == "slow_link" and "slow_link: no_answer" in row["hostile_gates"]:
            failed.append(f"answers {name}: the slow link's signed answer was refused ({row['hostile_gates']})")
        if row["log_control_characters"] or row["log_forged_lines"] or row["verdict_control_characters"]:
            failed.append(
                f"answers {name}: control characters in the log {row['log_control_characters']}, forged lines"
                f" {row['log_forged_lines']}, in verdicts {row['verdict_control_characters']}"
            )
    return failed
