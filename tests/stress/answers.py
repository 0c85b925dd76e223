"""Issue 45 as scenarios: the validator `neurons/validator.py` builds (its flags, the offline chain, W&B offline),
in a process of its own as the soak runs it, over honest miners (the scale study's answer server) and hostile ones
(`bombs.py`), one phase per attack, each on a fresh subnet:

* `baseline`: the honest miners alone (the memory every other phase is compared with);
* `gzip_bomb_1`, `bombs_50`: one `gzip, gzip` bomb of 1 GiB; fifty bombs of every kind (gzip, nested JSON as an
  error body, as a signed health answer and as a signed answer's header);
* `compressed_100`: a hundred gzip answers of 64 MB each;
* `slow_link`: an honest signed answer sent at 50 KB/s, 16 s of a 20 s timeout;
* `plain_256`, `fat_health_256`: 256 miners whose signed health lists the three services, then 256 whose signed
  health lists 250 KB of services each (the most a validator reads): what the validator keeps of them is the
  difference of its heap after the rounds;
* `log_injection`: error bodies with escape sequences and a forged "set weights" line, and signed answers whose
  model and device hold control characters.

Each phase reports whether every round completed and set weights, whether every honest miner was judged every
round, how each hostile miner was gated, the validator's peak memory (VmHWM) and its Python heap after the rounds
(what it keeps), and every control character in its log.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

from audionet.benchmarks.validator_scale.subnet import NETUID, start
from audionet.lib.core.wallet import create_wallet
from tests.stress import bombs, soak
from tests.stress.badminers import BadMinerServers, enlist

HONEST = 8  # more than the curve's reference quantile sits above among 256 hostile uids (the fifth best)
SERVICES = ("tts", "music")
FULL = {"bombs": 50, "compressed": 100, "fat_health": 256, "log_injection": 4}
SMALL = {"bombs": 8, "compressed": 10, "fat_health": 16, "log_injection": 2}


def phases(size: dict) -> dict[str, list[str]]:
    """Each phase's hostile miners, by behaviour."""
    return {
        "baseline": [],
        "gzip_bomb_1": ["gzip_bomb"],
        "bombs_n": [bombs.BOMBS[i % len(bombs.BOMBS)] for i in range(size["bombs"])],
        "compressed_n": ["compressed"] * size["compressed"],
        "slow_link": ["slow_link"],
        "plain_n": ["plain"] * size["fat_health"],  # the same number of miners with a plain health answer
        "fat_health_n": ["fat_health"] * size["fat_health"],
        "log_injection": ["log_injection"] * size["log_injection"],
    }


def control_characters(text: str) -> int:
    """Characters a terminal or a log reader could take for something else (all but newline and tab that Python
    does not count as printable)."""
    return sum(1 for ch in text if ch not in "\n\t" and not ch.isprintable())


def verdicts(rounds_path: str) -> list[list[dict]]:
    if not os.path.exists(rounds_path):
        return []
    with open(rounds_path) as handle:
        return [json.loads(line)["results"] for line in handle if line.endswith("\n")]


def honest_figures(rounds: list[list[dict]], honest: set[str]) -> dict:
    """How many honest answers were judged (not refused for their transport), and whether in every round."""
    rows = [[row for row in results if row["hotkey"] in honest] for results in rounds]
    judged = [[row["gate_name"] != "no_answer" for row in per_round] for per_round in rows]
    return {
        "answers": sum(len(r) for r in judged),
        "judged": sum(sum(r) for r in judged),
        "every_round": bool(judged) and all(r and all(r) for r in judged),
    }


def run_phase(workdir: str, behaviours: list[str], rounds: int, seed: int) -> dict:
    """`rounds` rounds of one validator process over HONEST honest miners and `behaviours` hostile ones."""
    started = time.perf_counter()
    subnet = start(workdir, HONEST, seed)
    try:
        validator = subnet.wallet.hotkey.ss58_address
        stranger = create_wallet("stranger", "default", os.path.join(workdir, "wallets"))
        wallets = os.path.join(workdir, "wallets")
        bad = enlist(subnet.chain_path, NETUID, wallets, behaviours, validator, 20.0, stranger)
        with BadMinerServers(bad):
            status, samples, log = soak.run_validator(
                workdir, subnet, rounds, 1, SERVICES, lambda _sample: None, timeout_s=None, sample_size=512
            )  # every miner every round
        weights = subnet.chain().weights(0)  # the validator registered first: uid 0
    finally:
        subnet.stop()
    rounds_found = verdicts(os.path.join(workdir, "validator", "rounds.jsonl"))
    hostile = {m.wallet.hotkey.ss58_address: m.behaviour for m in bad}
    known = {validator, *hostile}
    honest = {row["hotkey"] for results in rounds_found for row in results if row["hotkey"] not in known}
    gates: Counter = Counter()  # "<behaviour>: <gate name>" -> answers, and one reason of each
    reasons: dict[str, str] = {}
    for results in rounds_found:
        for row in results:
            if row["hotkey"] in hostile:
                key = f"{hostile[row['hotkey']]}: {row['gate_name'] or 'judged'}"
                gates[key] += 1
                reasons.setdefault(key, (row["gate"] or "")[:160])
    kept = [s for s in samples if not s.get("final")]
    return {
        "hostile": dict(Counter(behaviours)),
        "rounds": rounds,
        "completed": len(rounds_found),
        "exit": status,
        "seconds": round(time.perf_counter() - started, 1),
        "failed_rounds": log.count("round failed"),
        "tracebacks": log.count("Traceback (most recent call last)"),
        "honest_miners": len(honest),
        "honest": honest_figures(rounds_found, honest),
        "weights_set": any(
            weights.get(row["uid"], 0) > 0 for r in rounds_found for row in r if row["hotkey"] in honest
        ),
        "hostile_gates": dict(gates.most_common()),
        "hostile_reasons": reasons,
        "peak_mb": round(max((s["peak_mb"] for s in samples), default=0.0), 1),
        "rss_after_mb": round(kept[-1]["rss_mb"], 1) if kept else None,
        "heap_after_mb": round(kept[-1]["heap_mb"], 1) if kept else None,
        "log_control_characters": control_characters(log),
        "log_forged_lines": sum(line.startswith(bombs.FORGED.split("\n")[1][:30]) for line in log.splitlines()),
        "verdict_control_characters": sum(
            control_characters(str(row.get(key) or "")) for results in rounds_found for row in results for key in row
        ),
    }


def run_answers(workdir: str, rounds: int = 4, size: dict = FULL, only=None, progress=print) -> dict:
    """Every phase (or those named in `only`), one after another; then each against the baseline (the fat health
    answers against as many plain ones)."""
    out: dict = {}
    for seed, (name, behaviours) in enumerate(phases(size).items(), start=1):
        needed = {"baseline", *(["plain_n"] if only and "fat_health_n" in only else [])}
        if only and name not in only and name not in needed:
            continue
        progress(f"issue 45: {name} ({len(behaviours)} hostile miners, {rounds} rounds)")
        try:
            out[name] = run_phase(os.path.join(workdir, name), behaviours, rounds, seed)
        except Exception as error:  # reported, and fails its threshold; the other phases still run
            out[name] = {"error": f"{type(error).__name__}: {error}"[:500]}
    base, plain = out.get("baseline", {}), out.get("plain_n", {})
    for name, row in out.items():
        if "error" not in row and "peak_mb" in base:
            row["peak_vs_baseline"] = round(row["peak_mb"] / base["peak_mb"], 3)
            control = plain if name == "fat_health_n" and "heap_after_mb" in plain else base
            row["heap_kept_mb"] = round(row["heap_after_mb"] - control["heap_after_mb"], 1)
    return out
