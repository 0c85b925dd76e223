"""The properties a subnet needs, read off a simulated run (`sim.Run`), each with the limit issues 33 and 42 set.

Windows: the steady window is the 12 hours before the events (every record long settled); the miners' events
(a turned cheat, a drop, a bait and switch, upgrades, newcomers) happen at its end, the validators' (a restart, a
lost state, an added service, a fresh validator) `sim.VALIDATOR_EVENTS_H` later. Pay is the miners' incentive
after Yuma consensus, per mechanism (per service, or all services on one); timings are read off each
validator's own weight settings (`events.py`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from audionet.benchmarks.incentive import bonds, events
from audionet.benchmarks.incentive.population import SPREAD
from audionet.benchmarks.incentive.roles import GPU, TEMPO
from audionet.benchmarks.incentive.sim import ROUND_S, Run
from audionet.lib.core import yuma

STEADY_H = 12.0
RISE_PER_HUNDREDTH, STD_AT_090, TRUST, NOISY_TRUST, RESTARTED_TRUST = 0.10, 0.10, 0.95, 0.93, 0.90
CHEAP_OVER_NEURAL, PARTIAL_LOSS, SPECIALIST, MOVED, FRESH_ON_CHEATS = 0.05, 0.25, 0.95, 0.01, 0.01
WITHIN_MIN, BAIT_AT_6H, BAIT_EXTRA_H, OUTAGE_LOSS = 60.0, 0.2, 5.0, 0.10
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


def at_most(value: float, limit: float, text: str | None = None) -> Check:
    return Check(value, f"<= {text or f'{limit:g}'}", value <= limit)


def at_least(value: float, limit: float, text: str | None = None) -> Check:
    return Check(value, f">= {text or f'{limit:g}'}", value >= limit)


def steady(run: Run) -> slice:
    return slice(max(0, run.event_epoch - int(STEADY_H * 3600 / ROUND_S) // TEMPO), run.event_epoch)


def curve_points(run: Run) -> dict[str, list[tuple[float, float, float]]]:
    """Per mechanism: (true relative quality, mean pay / the best's, std over epochs / mean) of the honest spread."""
    pay = run.incentive[steady(run)]
    out = {}
    for m, name in enumerate(run.mechanisms):
        best = pay[:, m, events.group(run, "honest", 1.0)].mean()
        rows = []
        for q in SPREAD:
            uids = events.group(run, "honest", q)
            mean = pay[:, m, uids].mean(axis=0)
            noise = np.divide(pay[:, m, uids].std(axis=0), mean, out=np.full(len(uids), np.inf), where=mean > 0)
            rows.append((q, float(mean.mean() / best) if best > 0 else 0.0, float(noise.max())))
        out[name] = rows
    return out


def check_all(run: Run, alone: Run | None = None, serving: dict[str, float] | None = None) -> dict[str, Check]:
    """Every property; `alone`: the same subnet with one copy of the copied model; `serving`: the serving-count
    scenario's measures (`serving.measure`)."""
    pay, window = run.incentive, steady(run)
    best = events.group(run, "honest", 1.0)
    checks: dict[str, Check] = {}
    points = curve_points(run)
    rise = max(
        (b - a) / round((qb - qa) / 0.01) for rows in points.values() for (qa, a, _), (qb, b, _) in zip(rows, rows[1:])
    )
    checks["weight/best rises per 0.01 of quality (max)"] = at_most(rise, RISE_PER_HUNDREDTH)
    at_090 = max(noise for rows in points.values() for q, _, noise in rows if abs(q - 0.9) < 1e-9)
    checks["a uid at 0.90: std / mean over epochs (max)"] = at_most(at_090, STD_AT_090, f"{STD_AT_090:.0%}")

    trust = run.validator_trust[window].mean(axis=0)
    honest = [v for v, r in enumerate(run.roles) if r.honest]
    plain = [v for v in honest if run.roles[v].spread == 1]
    noisy = [v for v in honest if run.roles[v].spread != 1]
    for coverage in ("GPU", "CPU"):
        low = float(trust[[v for v in plain if run.roles[v].coverage == coverage]].min())
        checks[f"honest {coverage} validators' trust (min)"] = at_least(low, TRUST)
    checks["2x-spread validators' trust (min)"] = at_least(float(trust[noisy].min()), NOISY_TRUST)
    median = float(np.median(trust[honest]))
    copiers = [v for v, r in enumerate(run.roles) if r.copies]
    above = float(max(trust[v] for v in copiers) - median)
    checks["weight copier's trust - honest median (max over 1-4 tempos)"] = at_most(above, 0.0)
    for name, model in bonds.MODELS.items():
        premium = bonds.copier_premium(run, window, model)
        checks[f"weight copier's dividends/stake - honest median ({name} bonds)"] = Check(premium, REPORTED, True)

    by_row = run.row_pay[window]
    cheap = events.group(run, "cheap")
    differs = [r for r, name in enumerate(run.rows) if _cheap_differs(run, name)]
    ratio = max(by_row[:, r, cheap].mean() / by_row[:, r, best].mean() for r in differs)
    checks["espeak class / neural, per uid (where a cheap engine exists)"] = at_most(ratio, CHEAP_OVER_NEURAL)
    most = float(pay[window.start :][:, :, events.group(run, "cheat")].max())
    checks["full-time cheats: most any earned in an epoch"] = Check(most, "0", most == 0)
    partial = events.group(run, "partial cheat")
    kept = by_row[:, :, partial].mean(axis=(0, 2)) / by_row[:, :, best].mean(axis=(0, 2))
    checks["25 % partial cheat: pay lost (least over services)"] = at_least(1 - kept.max(), PARTIAL_LOSS, "25%")

    zero, newcomer = events.timings(run)
    checks["turned cheat: minutes until most stake sets it 0"] = at_most(zero, WITHIN_MIN)
    checks["better newcomer out-earns the best: minutes (most stake)"] = at_most(newcomer, WITHIN_MIN)
    at_6h, extra = events.bait(run)
    checks["bait and switch 1.00 -> 0.80: pay / the best's 6 h after"] = at_most(at_6h, BAIT_AT_6H)
    checks["bait and switch: pay beyond a steady 0.80's, best-uid-hours (4 days)"] = at_most(extra, BAIT_EXTRA_H)
    upgrade, hotkey = events.hours_to_best(run, "upgrade"), events.hours_to_best(run, "new hotkey")
    checks["upgrade 0.85 -> 1.00 (says so): hours to 90% of the best's pay - a new hotkey's"] = at_most(
        upgrade - hotkey, 0.0
    )
    checks["a new hotkey at 1.00: hours to 90% of the best's pay"] = Check(hotkey, REPORTED, True)
    checks["upgrade, same model name: hours to 90% of the best's pay"] = Check(
        events.hours_to_best(run, "quiet upgrade"), REPORTED, True
    )
    checks["a cheat turned honest: hours to 90% of the best's pay"] = Check(
        events.hours_to_best(run, "reformed"), REPORTED, True
    )
    checks["down an hour a day (4 %), failing: pay lost"] = at_most(
        events.outage_cost(run, "flaky"), OUTAGE_LOSS, "10%"
    )
    checks["down an hour a day, declared: pay lost"] = Check(events.outage_cost(run, "declares"), REPORTED, True)
    checks["a drop 1.00 -> 0.85: share of its weight change after 1 h"] = Check(
        _drop_shown(run, points), REPORTED, True
    )

    checks["one-service specialist / best all-rounder, in its service"] = at_least(_specialist(run), SPECIALIST)
    if alone is not None:
        copies = events.group(run, "copy")
        many = pay[window][:, :, copies].mean()
        one = _one_uid_at(alone, next(g.quality for g in alone.groups if g.kind == "copy"))
        excess = float(many / one) if one > 0 else float("inf")
        checks[f"{len(copies)} copies / {len(copies)} x one copy"] = at_most(excess, 1 + 1e-9, "1")
    if serving is not None:
        checks["thin service: 230 cheap uids begin to serve, pay of a uid at 0.90 moved"] = at_most(
            serving["moved"], MOVED, f"{MOVED:.0%}"
        )
        checks["thin service: 6 copies of the best / 6 x one copy"] = at_most(serving["copies"], 1 + 1e-9, "1")

    restart = _moved(run, "GPU restarts")
    checks["a restart: weight moved at its first setting after (vs not restarting)"] = at_most(
        restart, MOVED, f"{MOVED:.0%}"
    )
    lost = [r.name for r in run.roles if r.loses_state]
    checks["a validator that lost its state: trust at its first setting (min)"] = at_least(
        min(events.first_setting_trust(run, name) for name in lost), RESTARTED_TRUST
    )
    for name in lost:
        checks[f"{name}: hours until it sets weights again"] = Check(events.hours_silent(run, name), REPORTED, True)
    checks["a validator that lost its state: share of epochs its stake counted while holding (min)"] = at_least(
        min(events.stake_counted_holding(run, name) for name in lost), 1.0, "100%"
    )
    added = _moved(run, "GPU adds music", kept=True)
    checks["adding music: weight moved in the services it scored (vs not adding it)"] = at_most(
        added, MOVED, f"{MOVED:.0%}"
    )
    checks["fresh validator: share of its weight on cheats (first 2 h)"] = at_most(
        _fresh_on_cheats(run), FRESH_ON_CHEATS, f"{FRESH_ON_CHEATS:.0%}"
    )
    blind = events.group(run, "blind")
    spot = float(pay[window][:, :, blind].sum(axis=2).mean(axis=0).max())
    checks["the offline profile's blind spot: share of a mechanism"] = Check(spot, REPORTED, True)
    return checks


def _cheap_differs(run: Run, mechanism: str) -> bool:
    """Whether the cheap class answers differently from the best in this mechanism's services."""
    group = next(g for g in run.groups if g.kind == "cheap")
    best = next(g for g in run.groups if g.kind == "honest" and g.quality == 1.0)
    services = run.services if mechanism == "all" else [mechanism]
    return any(not np.array_equal(group.answers[s], best.answers[s]) for s in services)


def _drop_shown(run: Run, points) -> float:
    """How much of its eventual loss a uid whose quality drops from 1.00 to 0.85 shows one hour later, at the
    median GPU validator at its defaults (eventual: what the honest spread earns at 0.85 in the steady window)."""
    dropped = events.group(run, "dropped")
    hour = run.event_round + int(3600 / ROUND_S)
    shares = []
    for m, rows in enumerate(points.values()):
        eventual = 1 - float(np.interp(0.85, [q for q, _, _ in rows], [w for _, w, _ in rows]))
        for v, role in enumerate(run.roles):
            if not role.honest or role.sample != GPU or role.spread != 1:
                continue
            before = [w for t, w, *_ in run.settings[v] if t < run.event_round][-1][m, dropped].mean()
            after = [w for t, w, *_ in run.settings[v] if t <= hour][-1][m, dropped].mean()
            if before > 0 and eventual > 0:
                shares.append((1 - after / before) / eventual)
    return float(np.median(shares)) if shares else 0.0


def _one_uid_at(run: Run, quality: float) -> float:
    """Steady pay of one uid at `quality`, from the honest uids either side of it (interpolated: the curve is
    linear there). Their answers are drawn as a copy's are, and one copy alone carries its record's luck: on seed 0
    it earned 0.730 of the best's pay, the honest uids at 0.94 and 0.96 0.70-0.75 and 0.81-0.82, six copies
    0.76-0.79."""
    each = run.incentive[steady(run)].mean(axis=(0, 1))
    below = max(q for q in SPREAD if q <= quality + 1e-9)
    above = min(q for q in SPREAD if q >= quality - 1e-9)
    low, high = (float(each[events.group(run, "honest", q)].mean()) for q in (below, above))
    return low if above == below else low + (high - low) * (quality - below) / (above - below)


def _specialist(run: Run) -> float:
    """The least, over one-service specialists at the best quality, of their pay in their service over the
    best all-rounders' pay in it."""
    pay = run.row_pay[steady(run)]
    best = events.group(run, "honest", 1.0)
    ratios = []
    for group in (g for g in run.groups if g.kind == "specialist"):
        uids = run.uids(lambda g, name=group.name: g.name == name)
        for r, name in enumerate(run.rows):
            if name in group.answers:
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
    cheats = np.concatenate([events.group(run, "cheat"), events.group(run, "turned")])
    shares = [
        float(w[:, cheats].sum() / w.sum()) for t, w, *_ in run.settings[v] if start <= t < start + 7200 / ROUND_S
    ]
    return max(shares) if shares else 0.0
