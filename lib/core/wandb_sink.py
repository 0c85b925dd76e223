"""The W&B sink of the timing layer (lib/core/telemetry.py drives it): a run started as the settings say,
one log call per step, and the run finished.

With no API key (WANDB_API_KEY or a ~/.netrc entry for api.wandb.ai) W&B runs offline, so nothing goes over
the network unless the operator has logged in. W&B's own files go to $WANDB_DIR, else next to timing.jsonl.
A W&B failure is one warning line on the `telemetry` logger; the caller then drops the run and carries on.
"""

from __future__ import annotations

import logging
import netrc
import os
from collections.abc import Sequence

from audionet.lib.core.audio import Audio
from audionet.lib.core.telemetry_settings import WandbSettings

log = logging.getLogger("telemetry")


def have_wandb_key() -> bool:
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (OSError, netrc.NetrcParseError):
        return False


def start_run(settings: WandbSettings, config: dict, log_dir: str, jsonl_path: str):
    """A W&B run carrying `config`, or None (one warning line: timing still goes to `jsonl_path`)."""
    try:
        import wandb

        mode = os.environ.get("WANDB_MODE") or ("online" if have_wandb_key() else "offline")
        run = wandb.init(
            project=settings.project,
            entity=settings.entity,
            mode=mode,
            config=config,
            dir=os.environ.get("WANDB_DIR") or log_dir,
            name=settings.name or f"{config.get('role', 'node')}-{str(config.get('hotkey', ''))[:8]}",
            reinit="create_new",
            settings=wandb.Settings(silent=True, console="off"),
        )
        log.info("W&B run %s (%s)", run.id, mode)
        return run
    except Exception as error:
        log.warning(
            "W&B is off for this run (%s: %s); timing still goes to %s",
            type(error).__name__,
            str(error).splitlines()[0][:200] if str(error) else "",
            jsonl_path,
        )
        return None


def log_to_run(run, values: dict, tables: dict[str, tuple[Sequence[str], list[dict]]], step: int) -> bool:
    """One W&B log call at `step`: the scalars (an `Audio` value goes up as a W&B audio clip) and `tables`
    (name -> (columns, rows), as `tables/<name>`). False after one warning line when W&B failed: the caller
    finishes the run and logs no more."""
    try:
        import wandb

        payload: dict = {
            key: wandb.Audio(v.samples, sample_rate=v.sample_rate) if isinstance(v, Audio) else v
            for key, v in values.items()
        }
        for name, (columns, rows) in tables.items():
            data = [[row.get(c) for c in columns] for row in rows]
            payload[f"tables/{name}"] = wandb.Table(columns=list(columns), data=data)
        run.log(payload, step=step)
        return True
    except Exception as error:
        log.warning(
            "W&B logging failed, W&B is off from now on (%s: %s); JSONL continues",
            type(error).__name__,
            str(error)[:200],
        )
        return False


def finish_run(run) -> None:
    try:
        run.finish()
    except Exception as error:
        log.warning("W&B finish failed: %s", error)
