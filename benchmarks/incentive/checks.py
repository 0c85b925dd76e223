"""The properties a subnet needs, read off a simulated run (`sim.Run`), each with the limit issue 33 set.

Windows: the steady window is the 12 hours before the events (every record long settled); the miners' events
(a turned cheat, a drop, better newcomers) happen at its end, the validators' (a restart, an added service, a
fresh validator) `sim.VALIDATOR_EVENTS_H` later. Pay is the miners' incentive after Yuma consensus, per mechanism
(per service, or all services on one); timings are read off each validator's own weight settings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from audionet.benchmarks.incentive.population import SPREAD
from audionet.benchmarks.incentive.sim import ROUND_S, SAMPLE, TEMPO, Run
from audionet.lib.core import yuma

STEADY_H = 12.0
RISE_PER_HUNDREDTH, STD_AT_090, TRUST = 0.10, 0.10, 0.95
CHEAP_OVER_NEURAL, PARTIAL_LOSS, SPECIALIST, MOVED, FRESH_ON_CHEATS = 0.05, 0.25, 0.95, 0.01, 0.01
WITHIN_MIN = 60.0
REPORTED = "(reported)"


@dataclass(frozen=True)
class Check:
    value: float
    limit: str
    ok: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))  # plain floats and bools, for JSON
        object.__setattr__(self, "ok", bool(self.ok))

    def as_dict(self) -> dict:
        return asdict(self)


def steady(run: Run) -> slice:
    return slice(max(0, run.event_epoch - int(STEADY_H * 3600 / ROUND_S) // TEMPO), run.event_epoch)


def per_uid(run: Run, kind: str, quality: float | None = None) -> np.ndarray:
    return run.uids(lambda g: g.kind == kind and (quality is None or abs(g.quality - quality) < 1e-9))


def curve_points(run: Run) -> dict[str, list[tuple[float, float, float]]]:
    """Per mechanism: (true relative quality, mean pay / the best's, std over epochs / mean) of the honest spread."""
    pay = run.incentive[steady(run)]
    out = {}
    for m, name in enumerate(run.mechanisms):
        best = pay[:, m, per_uid(run, "honest", 1.0)].mean()
        rows = []
        for q in SPREAD:
            uids = per_uid(run, "honest", q)
            mean = pay[:, m, uids].mean(axis=0)
            noise = np.divide(pay[:, m, uids].std(axis=0), mean, out=np.full(len(uids), np.inf), where=mean > 0)
            rows.append((q, float(mean.mean() / best) if best > 0 else 0.0, float(noise.max())))
        out[name] = rows
    return out


def check_all(run: Run, alone: Run | None = None) -> dict[str, Check]:
    pay, window = run.incentive, steady(run)
    best = per_uid(run, "honest", 1.0)
    checks: dict[str, Check] = {}
    points = curve_points(run)
    rise = max(
        (b - a) / round((qb - qa) / 0.01) for rows in points.values() for (qa, a, _), (qb, b, _) in zip(rows, rows[1:])
    )
    checks["weight/best rises per 0.01 of quality (max)"] = Check(
        rise, f"<= {RISE_PER_HUNDREDTH}", rise <= RISE_PER_HUNDREDTH
    )
    at_090 = max(noise for rows in points.values() for q, _, noise in rows if abs(q - 0.9) < 1e-9)
    checks["a uid at 0.90: std / mean over epochs (max)"] = Check(at_090, f"<= {STD_AT_090:.0%}", at_090 <= STD_AT_090)

    trust = run.validator_trust[window].mean(axis=0)
    honest = [v for v, r in enumerate(run.roles) if r.honest]
    low = float(trust[honest].min())
    checks["honest validators' trust (min, 2x noise included)"] = Check(low, f">= {TRUST}", low >= TRUST)
    median = float(np.median(trust[honest]))
    copiers = [v for v, r in enumerate(run.roles) if r.copies]
    above = float(max(trust[v] for v in copiers) - median)
    checks["weight copier's trust - honest median (max over 1-4 tempos)"] = Check(above, "<= 0", above <= 0)

    by_row = run.row_pay[window]
    cheap = per_uid(run, "cheap")
    differs = [r for r, name in enumerate(run.rows) if _cheap_differs(run, name)]
    ratio = max(by_row[:, r, cheap].mean() / by_row[:, r, best].mean() for r in differs)
    checks["espeak class / neural, per uid (where a cheap engine exists)"] = Check(
        float(ratio), f"<= {CHEAP_OVER_NEURAL}", ratio <= CHEAP_OVER_NEURAL
    )
    cheats = per_uid(run, "cheat")
    most = float(pay[window.start :][:, :, cheats].max())
    checks["full-time cheats: most any earned in an epoch"] = Check(most, "0", most == 0)
    partial = per_uid(run, "partial cheat")
    kept = by_row[:, :, partial].mean(axis=(0, 2)) / by_row[:, :, best].mean(axis=(0, 2))
    lost = float(1 - kept.max())
    checks["25 % partial cheat: pay lost (least over services)"] = Check(
        lost, f">= {PARTIAL_LOSS:.0%}", lost >= PARTIAL_LOSS
    )

    zero, newcomer = _timings(run)
    checks["turned cheat: minutes until most stake sets it 0"] = Check(zero, f"<= {WITHIN_MIN:g}", zero <= WITHIN_MIN)
    checks["better newcomer out-earns the best: minutes (most stake)"] = Check(
        newcomer, f"<= {WITHIN_MIN:g}", newcomer <= WITHIN_MIN
    )
    shown = _drop_shown(run, points)
    checks["a drop 1.00 -> 0.85: share of its weight change after 1 h"] = Check(shown, REPORTED, True)

    specialist = _specialist(run)
    checks["one-service specialist / best all-rounder, in its service"] = Check(
        specialist, f">= {SPECIALIST}", specialist >= SPECIALIST
    )
    if alone is not None:
        copies = per_uid(run, "copy")
        many = pay[window][:, :, copies].sum(axis=2).mean()
        one = alone.incentive[steady(alone)][:, :, per_uid(alone, "copy")].sum(axis=2).mean()
        excess = float(many / (len(copies) * one)) if one > 0 else float("inf")
        checks[f"{len(copies)} copies / {len(copies)} x one copy"] = Check(excess, "<= 1", excess <= 1 + 1e-9)

    restart = _moved(run, "restarts")
    checks["a restart: weight moved at its first setting after (vs not restarting)"] = Check(
        restart, f"<= {MOVED:.0%}", restart <= MOVED
    )
    added = _moved(run, "adds music", kept=True)
    checks["adding music: weight moved in the services it scored (vs not adding it)"] = Check(
        added, f"<= {MOVED:.0%}", added <= MOVED
    )
    fresh = _fresh_on_cheats(run)
    checks["fresh validator: share of its weight on cheats (first 2 h)"] = Check(
        fresh, f"<= {FRESH_ON_CHEATS:.0%}", fresh <= FRESH_ON_CHEATS
    )
    blind = per_uid(run, "blind")
    spot = float(pay[window][:, :, blind].sum(axis=2).mean(axis=0).max())
    checks["the offline profile's blind spot: share of a mechanism"] = Check(spot, REPORTED, True)
    return checks


def _cheap_differs(run: Run, mechanism: str) -> bool:
    """Whether the cheap class answers differently from the best in this mechanism's services."""
    group = next(g for g in run.groups if g.kind == "cheap")
    best = next(g for g in run.groups if g.kind == "honest" and g.quality == 1.0)
    services = run.services if mechanism == "all" else [mechanism]
    return any(not np.array_equal(group.answers[s], best.answers[s]) for s in services)


def _timings(run: Run) -> tuple[float, float]:
    """Minutes after the events until validators holding more than half of the stake set 0 for the turned
    cheats (so Yuma's consensus pays them 0 from the next epoch on), and until they weight the newcomers above
    the best incumbents."""
    turned, newcomers, best = per_uid(run, "turned"), per_uid(run, "newcomer"), per_uid(run, "honest", 1.0)

    def minutes(happened) -> float:
        found = []
        for v, role in enumerate(run.roles):
            if role.stake > 0 and not role.fresh:
                at = next((t for t, w, _ in run.settings[v] if t >= run.event_round and happened(w)), None)
                found.append((np.inf if at is None else (at - run.event_round) * ROUND_S / 60, role.stake))
        found.sort()
        held = np.cumsum([stake for _, stake in found]) / sum(stake for _, stake in found)
        return float(found[int(np.argmax(held > 0.5))][0])

    return minutes(lambda w: w[:, turned].max() == 0), minutes(lambda w: w[:, newcomers].mean() > w[:, best].mean())


def _drop_shown(run: Run, points) -> float:
    """How much of its eventual loss a uid whose quality drops from 1.00 to 0.85 shows one hour later, at the
    median validator at its defaults (eventual: what the honest spread earns at 0.85 in the steady window)."""
    dropped = per_uid(run, "dropped")
    hour = run.event_round + int(3600 / ROUND_S)
    shares = []
    for m, rows in enumerate(points.values()):
        eventual = 1 - float(np.interp(0.85, [q for q, _, _ in rows], [w for _, w, _ in rows]))
        for v, role in enumerate(run.roles):
            if not role.honest or role.sample != SAMPLE:
                continue
            before = [w for t, w, _ in run.settings[v] if t < run.event_round][-1][m, dropped].mean()
            after = [w for t, w, _ in run.settings[v] if t <= hour][-1][m, dropped].mean()
            if before > 0 and eventual > 0:
                shares.append((1 - after / before) / eventual)
    return float(np.median(shares)) if shares else 0.0


def _specialist(run: Run) -> float:
    """The least, over one-service specialists at the best quality, of their pay in their service over the
    best all-rounders' pay in it."""
    pay = run.row_pay[steady(run)]
    best = per_uid(run, "honest", 1.0)
    ratios = []
    for group in (g for g in run.groups if g.kind == "specialist"):
        uids = run.uids(lambda g, name=group.name: g.name == name)
        for r, name in enumerate(run.rows):
            if name == "all" or name in group.answers:
                ratios.append(pay[:, r, uids].mean() / pay[:, r, best].mean())
    return float(min(ratios))


def _moved(run: Run, role_name: str, kept: bool = False) -> float:
    """Half the L1 distance between a validator's first weights after its event and its twin's at the same
    round (what it would have set without the event): per mechanism, or with `kept` per service it scored
    before the event (the most of them)."""
    names = [r.name for r in run.roles]
    v, twin = names.index(role_name), next(i for i, r in enumerate(run.roles) if r.twin == role_name)
    t, *after = next(s for s in run.settings[v] if s[0] >= run.validator_event_round)
    unmoved = next(s[1:] for s in run.settings[twin] if s[0] == t)
    adds = run.roles[v].adds
    pick = 1 if kept else 0
    labels = run.rows if kept else run.mechanisms
    moved = [
        0.5 * np.abs(yuma.normalise(a) - yuma.normalise(b)).sum()
        for name, a, b in zip(labels, after[pick], unmoved[pick])
        if not (kept and name == adds)
    ]
    return float(max(moved))


def _fresh_on_cheats(run: Run) -> float:
    v = next(i for i, r in enumerate(run.roles) if r.fresh)
    start = run.validator_event_round
    cheats = np.concatenate([per_uid(run, "cheat"), per_uid(run, "turned")])
    shares = [float(w[:, cheats].sum() / w.sum()) for t, w, _ in run.settings[v] if start <= t < start + 7200 / ROUND_S]
    return max(shares) if shares else 0.0
