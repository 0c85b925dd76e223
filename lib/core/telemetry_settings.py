"""The telemetry flags as typed settings: --wandb.* (`WandbSettings`) and --telemetry.* (`TelemetrySettings`),
read by the sinks in lib/core/telemetry.py and lib/core/wandb_sink.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.config import Settings, setting


def add_telemetry_flags(parser) -> None:
    """--wandb.* and --telemetry.*, read back by `TelemetrySettings.from_flags`."""
    WandbSettings.add_flags(parser, "W&B (timing and verdicts)")
    TelemetrySettings.add_flags(parser, "telemetry (timing to W&B and JSONL)")


@dataclass
class WandbSettings(Settings):
    project: str = setting("wandb.project", "audionet", help="W&B project")
    entity: Optional[str] = setting("wandb.entity", None, help="W&B entity (team or user)")
    name: Optional[str] = setting("wandb.name", None, help="W&B run name (default: <role>-<hotkey prefix>)")
    off: bool = setting(
        "wandb.off", False, action="store_true", help="no W&B at all (the JSONL timing log is still written)"
    )


@dataclass
class TelemetrySettings(Settings):
    """--wandb.* and --telemetry.* as typed settings."""

    wandb: WandbSettings = field(default_factory=WandbSettings)
    interval_s: float = setting("telemetry.interval", 60.0, type=float, help="seconds between timing flushes")
    dir: Optional[str] = setting(
        "telemetry.dir", None, help="where timing.jsonl goes (default: the neuron's state dir)"
    )  # None: the neuron's state dir

    @classmethod
    def from_flags(cls, args, **values) -> TelemetrySettings:
        return super().from_flags(args, **{"wandb": WandbSettings.from_flags(args), **values})
