"""A score in words: the parts a service's declaration (declaration.py) pays for, the ceilings that held a
part under what its own judges said, and the penalties that took from it, by the declaration's names, over one
clip or several ("adherence 0.12, musicality 0.40; ceilings: adherence held 0.30 under its own judges (2 of 3
clips); penalties: loop took 100% (3 of 3 clips)"). The self-check and the localnet report both explain scores
with it, from the `components` a verdict row carries (its raw measures, parts by name, each penalty as
`<name>_penalty`: the share it took).

Data and arithmetic only: the miner's self-check and the report read it without the scoring stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from audionet.lib.scoring.declaration import Judging

PENALTY = "_penalty"  # how a penalty's share taken is named among a verdict's components (jobs.Verdict)
NOTABLE = 0.01  # a penalty that took less than this share of a score is not worth a word


def penalty_names(judging: Judging) -> list[str]:
    """Every multiplier a verdict of this service may carry: the penalties, then the gating parts' `_gate`."""
    return [p.name for p in judging.penalties] + [f"{p.name}_gate" for p in judging.parts if p.gate]


def words(name: str) -> str:
    return name.replace("_", " ")


def parts_of(judging: Judging, components: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Each declared part's mean value over the clips that have it, in the declaration's order."""
    found = {}
    for part in judging.parts:
        values = [c[part.name] for c in components if part.name in c]
        if values:
            found[part.name] = fmean(values)
    return found


def ceilings_of(judging: Judging, components: Sequence[Mapping[str, float]]) -> dict[str, tuple[float, int]]:
    """Each ceiling that held its part notably below what the part's own judges said (a judge the attack
    cannot move disagreed): (the mean it took over the clips, the clips it held), from each clip's measures."""
    found = {}
    for part in (p for p in judging.parts if p.ceiling is not None):
        taken = []
        for clip in components:
            own, cap = part.uncapped(clip), part.ceiling.bound(clip)
            if own is not None and cap is not None and part.name in clip and clip[part.name] == min(own, cap):
                taken.append(own - clip[part.name])
        hit = sum(share >= NOTABLE for share in taken)
        if hit:
            found[part.name] = (fmean(taken), hit)
    return found


def penalties_of(judging: Judging, components: Sequence[Mapping[str, float]]) -> dict[str, tuple[float, int]]:
    """Each penalty that took a notable share: (its mean share taken over the clips, the clips it took from),
    the largest first."""
    found = {}
    for name in penalty_names(judging):
        taken = [c.get(name + PENALTY, 0.0) for c in components]
        hit = sum(share >= NOTABLE for share in taken)
        if hit:
            found[name] = (fmean(taken), hit)
    return dict(sorted(found.items(), key=lambda item: -item[1][0]))


def in_words(judging: Judging, components: Sequence[Mapping[str, float]]) -> str:
    """'parts adherence 0.12, aesthetics 0.05; penalties: loop took 100% (3 of 3 clips)', with the ceilings that
    held a part between them; '' for no clip."""
    if not components:
        return ""
    parts = ", ".join(f"{words(name)} {value:.2f}" for name, value in parts_of(judging, components).items())
    n = len(components)
    clips = lambda hit: f" ({hit} of {n} clips)" if n > 1 else ""  # noqa: E731
    held = ", ".join(
        f"{words(name)} held {taken:.2f} under its own judges" + clips(hit)
        for name, (taken, hit) in ceilings_of(judging, components).items()
    )
    penalties = ", ".join(
        f"{words(name)} took {share:.0%}" + clips(hit)
        for name, (share, hit) in penalties_of(judging, components).items()
    )
    return (
        f"parts {parts or 'none measured'}; "
        + (f"ceilings: {held}; " if held else "")
        + (f"penalties: {penalties}" if penalties else "no penalty")
    )
