"""The properties a scores-to-weights curve must keep, checked on simulated runs (`incentive_sim`).

Rounds of a run: uids present from round 0 are steady from a quarter of the run on (by then each has a full
EMA memory); the newcomers register at the half. Stability and ranks are judged from the quarter to the half,
what cheats earn from the quarter to the end, cold start from the half on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from audionet.benchmarks.incentive.sim import Population, Run
from audionet.lib.validator.incentive import Curve

CHEAP_OVER_NEURAL = 0.15  # the espeak class earns at most this share of what a neural miner earns
CHEATS_TOGETHER = 0.001  # all cheat uids together
IDENTICAL = 0.01
COLD_START_SHARE, COLD_START_ROUNDS = 0.9, 10
MAX_MOVE = 0.10  # a steady miner's weight from one round to the next
RANK_GAP = 0.05  # miners whose true means differ by this much never swap
TRUST = 0.95
REPORTED = "(reported, no limit)"


@dataclass(frozen=True)
class Check:
    value: float
    limit: str  # what it must be, in words
    ok: bool

    def as_dict(self) -> dict:
        return asdict(self)


def paid(run: Run, consensus: bool) -> np.ndarray:
    """[round, uid]: the validator's own weights, or the miners' incentive after Yuma consensus."""
    return run.incentive if consensus else run.weights[0]


def windows(run: Run) -> tuple[slice, int]:
    rounds = run.weights.shape[1]
    return slice(rounds // 4, rounds // 2), rounds // 2


def per_uid(pop: Population, weights: np.ndarray, index: int) -> float:
    """Mean weight of one uid of group `index` over the given rounds."""
    return float(weights[:, pop.uids(index)].mean())


def check_all(pop: Population, run: Run, alone: Run | None, curve: Curve, consensus: bool = False) -> dict[str, Check]:
    w = paid(run, consensus)
    steady, half = windows(run)
    groups = pop.groups
    neural = [i for i, g in enumerate(groups) if g.miner.kind == "neural" and g.joins == 0 and not g.twin]
    cheap = [i for i, g in enumerate(groups) if g.miner.kind == "cheap"]
    cheats = [i for i, g in enumerate(groups) if g.miner.kind == "cheat" and g.joins == 0]
    newcomers = [i for i, g in enumerate(groups) if g.joins > 0 and g.miner.kind == "neural"]
    young_cheats = [i for i, g in enumerate(groups) if g.joins > 0 and g.miner.kind == "cheat"]
    twins = [i for i, g in enumerate(groups) if g.twin]
    best = per_uid(pop, w[steady], neural[0])
    checks = {}

    twin, original = pop.uids(twins[0])[0], pop.uids(twins[0] - 1)[0]
    a, b = w[steady, twin], w[steady, original]
    gap = np.abs(a - b) / np.maximum(np.maximum(a, b), 1e-300)
    checks["identical streams"] = Check(float(gap.max()), f"<= {IDENTICAL:.0%} apart", bool(gap.max() <= IDENTICAL))

    falls = monotone_violations(curve, run.ema, run.count)
    checks["higher mean never earns less"] = Check(falls, "0 uids", falls == 0)

    ratio = per_uid(pop, w[steady], cheap[0]) / best if best > 0 else np.inf
    checks["espeak class / neural"] = Check(ratio, f"<= {CHEAP_OVER_NEURAL:g}", bool(ratio <= CHEAP_OVER_NEURAL))

    cheat_uids = np.concatenate([pop.uids(i) for i in cheats])
    known = w[steady.start :, cheat_uids]
    checks["cheat uids earning"] = Check(int((known.max(axis=0) > 0).sum()), "0", bool(known.max() == 0))
    together = float(known.sum(axis=1).max())
    limit = f"< {CHEATS_TOGETHER:.1%}"
    checks[f"{len(cheat_uids)} cheat uids together"] = Check(together, limit, together < CHEATS_TOGETHER)
    fresh = w[half:, np.concatenate([pop.uids(i) for i in young_cheats])].mean()
    settled = w[half:, pop.uids(neural[0])].mean()
    ratio = float(fresh / settled) if settled > 0 else float("inf")
    checks["a fresh cheat / a neural uid, after it registers"] = Check(ratio, REPORTED, True)

    if alone is not None:
        copies = len(pop.uids(neural[0])) + len(pop.uids(twins[0]))
        many = float(w[steady][:, np.concatenate([pop.uids(neural[0]), pop.uids(twins[0])])].sum(axis=1).mean())
        single = float(paid(alone, consensus)[steady, 0].mean())
        excess = many / (copies * single) if single > 0 else np.inf
        checks[f"{copies} copies / {copies} x one copy"] = Check(excess, "<= 1", bool(excess <= 1 + 1e-9))

    new = pop.uids(newcomers[0])
    before = w[half : half + curve.eligible_after - 1, new]
    paid_early = float(before.max(initial=0.0))
    checks["newcomer paid before eligible"] = Check(paid_early, "0", paid_early == 0)
    start = half + max(curve.eligible_after - 1, 0)
    target = COLD_START_SHARE * w[start:, pop.uids(neural[0])].mean(axis=1)
    reached = np.flatnonzero(w[start:, new].mean(axis=1) >= target)
    rounds_to = int(reached[0]) if reached.size else 10**6
    limit = f"<= {COLD_START_ROUNDS} after eligible"
    checks["rounds to 90% of steady"] = Check(rounds_to, limit, rounds_to <= COLD_START_ROUNDS)

    steady_uids = pop.uids(neural[0])
    prev, cur = w[steady.start - 1 : steady.stop - 1, steady_uids], w[steady, steady_uids]
    move = float(np.max(np.abs(cur - prev) / np.maximum(prev, 1e-300)))
    checks["steady weight moves"] = Check(move, f"<= {MAX_MOVE:.0%} a round", move <= MAX_MOVE)

    swaps = rank_swaps(pop, w[steady])
    checks["rank swaps (means 0.05 apart)"] = Check(swaps, "0 rounds", swaps == 0)

    if consensus:
        low = float(run.trust[steady, :-1].min())  # the last validator is the one that lags
        checks["validator trust (up to date)"] = Check(low, f">= {TRUST}", low >= TRUST)
    return checks


def monotone_violations(curve: Curve, ema: np.ndarray, count: np.ndarray, step: float = 0.01) -> int:
    """Uids whose weight would fall if their score rose by `step` in every service (at the run's end)."""
    before = curve.weights(ema, count)
    falls = 0
    for uid in range(ema.shape[1]):
        raised = ema.copy()
        raised[:, uid] = np.minimum(raised[:, uid] + step, 1.0)
        falls += int(curve.weights(raised, count)[uid] < before[uid] - 1e-12)
    return falls


def rank_swaps(pop: Population, w: np.ndarray) -> int:
    """Rounds in which some uid earns strictly more than a uid whose class's true mean is RANK_GAP higher."""
    steady = [i for i, g in enumerate(pop.groups) if g.joins == 0]
    low = {i: w[:, pop.uids(i)].min(axis=1) for i in steady}
    high = {i: w[:, pop.uids(i)].max(axis=1) for i in steady}
    bad = np.zeros(w.shape[0], bool)
    for i in steady:
        for j in steady:
            if pop.groups[i].miner.mean - pop.groups[j].miner.mean >= RANK_GAP:
                bad |= high[j] > low[i]
    return int(bad.sum())


def class_shares(pop: Population, run: Run, consensus: bool = False) -> dict[str, dict]:
    """Per class: uids, share of all weight and per-uid weight relative to a neural uid (steady window)."""
    w = paid(run, consensus)
    steady, _ = windows(run)
    out: dict[str, dict] = {}
    for index, group in enumerate(pop.groups):
        if group.joins > 0 or group.twin:
            continue
        uids = pop.uids(index)
        row = out.setdefault(group.miner.name, {"kind": group.miner.kind, "mean": group.miner.mean, "uids": 0})
        row["uids"] += len(uids)
        row["share"] = row.get("share", 0.0) + float(w[steady][:, uids].sum(axis=1).mean())
    neural = next(r for r in out.values() if r["kind"] == "neural")
    per_neural = neural["share"] / neural["uids"]
    for row in out.values():
        row["per_uid_vs_neural"] = row["share"] / row["uids"] / per_neural if per_neural > 0 else 0.0
    return out


def traces(pop: Population, run: Run, consensus: bool = False) -> dict[str, list[float]]:
    """Mean weight per round of one uid of: the steady neural class, the newcomers, the espeak class."""
    w = paid(run, consensus)
    pick = {
        "neural": lambda g: g.miner.kind == "neural" and g.joins == 0 and not g.twin,
        "newcomer": lambda g: g.joins > 0 and g.miner.kind == "neural",
        "espeak class": lambda g: g.miner.kind == "cheap",
    }
    out = {}
    for name, match in pick.items():
        index = next(i for i, g in enumerate(pop.groups) if match(g))
        out[name] = w[:, pop.uids(index)].mean(axis=1).round(6).tolist()
    return out
