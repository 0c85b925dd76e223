"""The validator's settings, each flag's default stated once in a typed field (`lib.core.config.setting`): how
many miners a round asks, how often, within what budget and timeouts, and when weights are set. The entry point
(`neurons/validator.py`) adds these flags with `ValidatorSettings.add_flags` and reads them with `from_flags`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Optional

from audionet.lib.core.config import Settings, positive_int, setting
from audionet.lib.core.errors import ConfigError
from audionet.lib.services import registry
from audionet.lib.validator.incentive import CURVE, HOUR, Curve
from audionet.lib.validator.mechanisms import parse_mechanisms, parse_split


def default_timeouts() -> dict[str, float]:
    """Seconds for the whole exchange, per registered service."""
    return {service.name: service.timeout_s for service in registry.all_services()}


def mechanisms_flag(text: str) -> Optional[dict[str, int]]:
    try:
        return parse_mechanisms(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def split_flag(text: str) -> dict[str, float]:
    try:
        return parse_split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@dataclass
class ValidatorSettings(Settings):
    """validator rounds"""

    state_dir: Optional[str] = setting(
        "neuron.state_dir",
        None,
        help="where state.json, summary.json and rounds.jsonl live (default ~/.audionet/<network>-<netuid>-<hotkey>)",
    )
    # The records' memory, eligibility and publishing threshold: the incentive curve's (CURVE), unless changed.
    record_hours: float = setting(
        "neuron.record_hours",
        CURVE.memory.record_s / HOUR,
        type=float,
        help="hours in which the weight of a miner's answers in its record falls by e",
    )
    eligible_after: int = setting(
        "neuron.eligible_after",
        CURVE.eligible_after,
        type=int,
        help="scored answers in a service before a miner can earn weight in it (a local development net may use 1)",
    )
    ready_error: float = setting(
        "neuron.ready_error",
        CURVE.ready_error,
        type=float,
        help="publish a service's weights once the typical miner's standard error is within this share of the "
        "reference (until then hold the last weights; inf: at once, for a local development net)",
    )
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
    services: tuple[str, ...] = setting(
        "neuron.services",
        default_factory=registry.names,
        type=registry.service_list,
        help="comma-separated services to query",
    )
    seed: Optional[int] = setting("neuron.seed", None, type=int, help="seed for prompts (default: fresh randomness)")
    save_audio_dir: Optional[str] = setting(
        "neuron.save_audio", None, help="keep every received clip as FLAC under this directory"
    )
    mechanisms: Optional[dict[str, int]] = setting(
        "neuron.mechanisms",
        None,
        type=mechanisms_flag,
        help="service:mechanism,... (auto, the default: one mechanism per service when the subnet runs enough, "
        "else all on 0)",
    )
    split: Optional[dict[str, float]] = setting(
        "neuron.split",
        None,
        type=split_flag,
        help="service:share,... of services that share a mechanism (default: even)",
    )
    rounds: int = setting("neuron.rounds", 0, type=int, help="stop after this many rounds (0 = run forever)")

    def __post_init__(self):
        if not (self.record_hours > 0 and self.ready_error > 0 and self.eligible_after >= 0):
            raise ConfigError(
                "--neuron.record_hours and --neuron.ready_error must be above 0, --neuron.eligible_after at least 0"
            )

    @property
    def curve(self) -> Curve:
        """The incentive curve with this validator's memory, eligibility and publishing threshold."""
        changed = replace(CURVE, eligible_after=self.eligible_after, ready_error=self.ready_error)
        return changed.with_memory(record_s=self.record_hours * HOUR)
