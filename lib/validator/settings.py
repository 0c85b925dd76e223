"""The validator's settings, each flag's default stated once in a typed field (`lib.core.config.setting`): how
many miners a round asks, how often, within what budget and timeouts, and when weights are set. The entry point
(`neurons/validator.py`) adds these flags with `ValidatorSettings.add_flags` and reads them with `from_flags`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.config import Settings, positive_int, setting
from audionet.lib.services import registry
from audionet.lib.validator.incentive import CURVE, Curve


def default_timeouts() -> dict[str, float]:
    """Seconds for the whole exchange, per registered service."""
    return {service.name: service.timeout_s for service in registry.all_services()}


@dataclass
class ValidatorSettings(Settings):
    """validator rounds"""

    state_dir: str
    curve: Curve = CURVE  # the records' memory, eligibility and the scores-to-weights curve
    sample_size: int = setting(
        "neuron.sample_size",
        256,
        type=positive_int,
        help="most miners a round asks (as many as fit the round interval at the measured cost per miner)",
    )
    epoch_length: int = setting("neuron.epoch_length", 100, type=positive_int, help="blocks between weight settings")
    round_interval: float = setting(
        "neuron.round_interval", 12.0, type=float, help="seconds from round start to the next"
    )
    round_budget_s: float = setting(
        "neuron.round_budget",
        0.0,
        type=float,
        help="seconds a round may take to judge, which sets how many miners it asks (0: the round interval; inf: "
        "every miner in --neuron.sample_size)",
    )
    timeouts: dict[str, float] = setting(
        "neuron.timeout",
        per_service="timeout_s",
        default_factory=default_timeouts,
        type=float,
        help="{title} request timeout, s",
    )
    services: tuple[str, ...] = field(default_factory=registry.names)
    seed: Optional[int] = setting("neuron.seed", None, type=int, help="seed for prompts (default: fresh randomness)")
    save_audio_dir: Optional[str] = setting(
        "neuron.save_audio", None, help="keep every received clip as FLAC under this directory"
    )
    mechanisms: Optional[dict[str, int]] = None  # service -> mechanism; None: one per service, or all on one
    split: dict[str, float] = field(default_factory=dict)  # shares of services that share a mechanism (missing: 1)
