"""Who validates in the incentive study: GPU and CPU validators side by side, at the validator's defaults, with
the stake a subnet's would hold, and the ones whose events the study measures.

Coverage from docs/validator.md: a GPU validator judges about 15 miners a 12 s round (a pass over 256 uids every
3.4 minutes), a CPU validator with the offline profile about 4 (every 13 minutes). GPU validators hold half the
stake. A noisier judge is modelled as each answer's deviation from the uid's mean doubled (clipped to 0..1, as
a noisier judge's scores are). Stake is in shares of the whole.
"""

from __future__ import annotations

from dataclasses import dataclass

GPU, CPU = 15, 4  # uids a validator judges a round (docs/validator.md#rounds-state-and-weights)
EPOCH_LENGTH = 100  # blocks between a validator's weight settings (its default)
TEMPO = 360  # blocks between epochs (the chain's default)


@dataclass(frozen=True)
class Role:
    name: str
    stake: float
    sample: int = GPU  # uids it asks a round
    spread: float = 1.0  # each answer's deviation from the uid's mean, times this (a noisier judge)
    every: int = EPOCH_LENGTH  # blocks between its weight settings
    fresh: bool = False  # starts at the validator events with nothing (a new validator)
    restarts: bool = False  # is down for sim.RESTART_S at the validator events, then resumes from its saved state
    loses_state: bool = False  # at the validator events it starts again with no records (a lost disk)
    adds: str | None = None  # a service it scores only from the validator events on
    copies: int = 0  # a weight copier: commits the consensus of this many epochs ago
    twin: str | None = None  # no stake; gets the named validator's answers, but neither restarts nor adds a service

    @property
    def honest(self) -> bool:
        """Judges and sets weights like a validator at its defaults, and scores every service throughout the
        steady window (a restart or a lost state comes after it)."""
        return not (self.fresh or self.copies or self.adds or self.twin or self.every != EPOCH_LENGTH)

    @property
    def coverage(self) -> str:
        return "GPU" if self.sample >= GPU else "CPU"


VALIDATORS = (
    Role("GPU A", 0.16),
    Role("GPU B", 0.10),
    Role("GPU, 2x spread", 0.06, spread=2.0),
    Role("GPU restarts", 0.06, restarts=True),
    Role("GPU loses its state", 0.06, loses_state=True),
    Role("GPU adds music", 0.06, adds="music"),
    Role("CPU A", 0.12, sample=CPU),
    Role("CPU B", 0.08, sample=CPU),
    Role("CPU, 2x spread", 0.07, sample=CPU, spread=2.0),
    Role("CPU lagging (every 3 tempos)", 0.06, sample=CPU, every=3 * TEMPO),
    Role("CPU loses its state", 0.05, sample=CPU, loses_state=True),
    Role("CPU fresh", 0.04, sample=CPU, fresh=True),
    *(Role(f"copier, {k} tempo{'s' if k > 1 else ''} behind", 0.02, copies=k) for k in (1, 2, 3, 4)),
    # What the restarting validator and the one adding a service would have paid without their event.
    Role("twin of GPU restarts", 0.0, twin="GPU restarts"),
    Role("twin of GPU adds music", 0.0, twin="GPU adds music"),
)
