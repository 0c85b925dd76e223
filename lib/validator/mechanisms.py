"""Which incentive mechanism pays for which service, and how services that share one are combined.

A subnet can run several incentive mechanisms (bittensor 11: `mechanism_count`, `MechanismEmissionSplit`),
each with its own weights, its own Yuma consensus and an owner-set share of the subnet's emission. audionet
puts one service on each when the subnet runs at least as many mechanisms as there are services (mechanism i
pays the i-th service of the registry: tts, vc, music), so a service's pay depends on that service alone.
With fewer mechanisms, the services that share one are combined by a split the validators are configured
with: the chain has no place to store a split between services of one mechanism.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.errors import ConfigError


@dataclass(frozen=True)
class Plan:
    """`mechanism[service]`: the mechanism that pays it; `split[service]`: its share among the services that
    share its mechanism (normalised there)."""

    mechanism: dict[str, int]
    split: dict[str, float]

    @property
    def used(self) -> list[int]:
        return sorted(set(self.mechanism.values()))

    def services_of(self, mechid: int) -> list[str]:
        return [s for s, m in self.mechanism.items() if m == mechid]

    def holding(self, mechid: int, ready: Mapping[str, bool]) -> list[str]:
        """The services of this mechanism a validator scores (those in `ready`) whose evidence does not yet support
        publishing: while there is any, the validator leaves the weights it last set on the mechanism."""
        return [s for s in self.services_of(mechid) if s in ready and not ready[s]]

    def combine(self, weights: Mapping[str, np.ndarray], mechid: int) -> np.ndarray:
        """One mechanism's weights from its services' (each L1-normalised): a service where nobody earned
        anything gives its share to the others."""
        rows = [(self.split[s], np.asarray(weights[s], float)) for s in self.services_of(mechid) if s in weights]
        paying = [(share, row) for share, row in rows if row.sum() > 0 and share > 0]
        if not paying:
            return np.zeros_like(rows[0][1]) if rows else np.zeros(0)
        total = sum(share for share, _ in paying)
        return sum(share / total * row / row.sum() for share, row in paying)


def parse_mechanisms(text: str) -> dict[str, int] | None:
    """`auto` (None), or `service:mechid,...` (e.g. `tts:0,vc:0,music:1`)."""
    if text.strip() == "auto":
        return None
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        service, _, mechid = item.partition(":")
        if not mechid.strip().isdigit():
            raise ValueError(f"{item!r}: expected service:mechanism (e.g. tts:0)")
        out[service.strip()] = int(mechid)
    return out


def parse_split(text: str) -> dict[str, float]:
    """`service:share,...` (relative shares; e.g. `tts:1,vc:1,music:2`)."""
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        service, _, share = item.partition(":")
        try:
            value = float(share)
        except ValueError:
            raise ValueError(f"{item!r}: expected service:share (e.g. tts:1)") from None
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{item!r}: a share is a finite number >= 0")
        out[service.strip()] = value
    return out


def plan(
    registered: Sequence[str],
    count: int,
    explicit: Mapping[str, int] | None = None,
    split: Mapping[str, float] | None = None,
) -> Plan:
    """The plan for a subnet running `count` mechanisms. `registered`: every registered service in the
    registry's order (a validator that scores fewer still puts each on the same mechanism as the others do);
    `explicit`: service -> mechanism (None: automatic); `split`: shares of services that share a mechanism
    (missing: even). Raises ConfigError when the subnet's mechanisms cannot carry the plan."""
    unknown = sorted((set(explicit or {}) | set(split or {})) - set(registered))
    if unknown:
        raise ConfigError(f"unknown service {unknown[0]!r} in --neuron.mechanisms or --neuron.split")
    if explicit is not None:
        missing = [s for s in registered if s not in explicit]
        if missing:
            raise ConfigError(f"--neuron.mechanisms names no mechanism for {', '.join(missing)}")
        mechanism = {s: int(explicit[s]) for s in registered}
    elif count >= len(registered):
        mechanism = {s: i for i, s in enumerate(registered)}
    elif count == 1:
        mechanism = {s: 0 for s in registered}
    else:
        raise ConfigError(
            f"the subnet runs {count} mechanisms for {len(registered)} services: say which service goes on which "
            "with --neuron.mechanisms (e.g. tts:0,vc:0,music:1)"
        )
    beyond = sorted({m for m in mechanism.values() if m >= count})
    if beyond:
        raise ConfigError(f"mechanism {beyond[0]} does not exist: the subnet runs {count}")
    shares = {s: float((split or {}).get(s, 1.0)) for s in registered}
    return Plan(mechanism, shares)
