"""Sinks for the timing layer: a local JSONL file (always) and W&B (optional).

Every `flush()` writes one JSONL record and, when W&B is on, logs the scalar
keys `timing/<service>/<stage>/avg_s|min_s|max_s|p50_s|p95_s|count|rtf` plus a
`wandb.Table` per device and service (`tables/<device>/<service>`).

Telemetry never breaks a neuron: a W&B failure is one warning line and W&B is
switched off for the rest of the run; the JSONL file keeps going. With no API
key (WANDB_API_KEY or a ~/.netrc entry for api.wandb.ai) W&B runs offline, so
nothing goes over the network unless the operator has logged in. W&B's own
files go to $WANDB_DIR, else next to timing.jsonl.
"""

from __future__ import annotations

import json
import logging
import math
import netrc
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional, Protocol

from audionet.lib.core.audio import Audio
from audionet.lib.core.config import Settings, setting
from audionet.lib.core.timing import Key, Stats, Timer, scalars

log = logging.getLogger("telemetry")
TABLE_COLUMNS = [
    "device",
    "service",
    "stage",
    "count",
    "avg_s",
    "min_s",
    "max_s",
    "p50_s",
    "p95_s",
    "audio_s",
    "rtf",
    "x_realtime",
]


def add_telemetry_flags(parser) -> None:
    """--wandb.* and --telemetry.*, read back by `TelemetrySettings.from_flags`."""
    WandbSettings.add_flags(parser, "W&B (timing and verdicts)")
    TelemetrySettings.add_flags(parser, "telemetry (timing to W&B and JSONL)")


def have_wandb_key() -> bool:
    if os.environ.get("WANDB_API_KEY"):
        return True
    try:
        return netrc.netrc().authenticators("api.wandb.ai") is not None
    except (OSError, netrc.NetrcParseError):
        return False


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("audionet")
    except Exception:
        return "unknown"


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


def _finite(value):
    return None if isinstance(value, float) and not math.isfinite(value) else value


def stats_rows(snapshot: dict[Key, Stats]) -> list[dict]:
    return [
        {
            "role": key.role,
            "device": key.device,
            "service": key.service,
            "stage": key.stage,
            **{k: _finite(v) for k, v in stats.as_dict().items()},
        }
        for key, stats in snapshot.items()
    ]


class Source(Protocol):
    """More scalars and one table beside the timer's (e.g. the validator's per-GPU network view):
    scalars go to W&B and the JSONL record's `scalars`, rows to `<name>` in the record and to the
    W&B table `tables/<name>`."""

    name: str
    columns: Sequence[str]

    def scalars(self) -> dict[str, float]: ...

    def rows(self) -> list[dict]: ...


class Telemetry:
    def __init__(
        self,
        timer: Timer,
        log_dir: str,
        config: dict,
        wandb_settings: Optional[WandbSettings] = None,
        sources: Sequence[Source] = (),
    ):
        self.timer, self.config, self.sources = timer, dict(config), tuple(sources)
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self.jsonl_path = os.path.join(log_dir, "timing.jsonl")
        self.step = 0
        self.run = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        if wandb_settings is not None and not wandb_settings.off:
            self.run = self._start_wandb(wandb_settings)

    def _start_wandb(self, settings: WandbSettings):
        try:
            import wandb

            mode = os.environ.get("WANDB_MODE") or ("online" if have_wandb_key() else "offline")
            run = wandb.init(
                project=settings.project,
                entity=settings.entity,
                mode=mode,
                config=self.config,
                dir=os.environ.get("WANDB_DIR") or self.log_dir,
                name=settings.name or f"{self.config.get('role', 'node')}-{str(self.config.get('hotkey', ''))[:8]}",
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
                self.jsonl_path,
            )
            return None

    def flush(self) -> dict[str, float]:
        """Write the current statistics to every sink; returns the scalars logged."""
        with self._lock:
            snapshot = self.timer.snapshot()
            values = scalars(snapshot, own_device=self.timer.device)
            extra = {source.name: source.rows() for source in self.sources}
            for source in self.sources:
                values.update(source.scalars())
            self.step += 1
            record = {
                "time": time.time(),
                "step": self.step,
                "role": self.timer.role,
                "device": self.timer.device,
                "scalars": values,
                "stats": stats_rows(snapshot),
                **extra,
            }
            try:
                with open(self.jsonl_path, "a") as handle:
                    handle.write(json.dumps(record) + "\n")
            except OSError as error:
                log.warning("cannot write %s: %s", self.jsonl_path, error)
            if self.run is not None and (snapshot or any(extra.values())):
                self._log_wandb(snapshot, values, extra)
            return values

    def _log_wandb(self, snapshot: dict[Key, Stats], values: dict[str, float], extra: dict[str, list[dict]]) -> None:
        rows = stats_rows(snapshot)
        tables = {
            f"{device}/{service}": (
                TABLE_COLUMNS,
                [r for r in rows if (r["device"], r["service"]) == (device, service)],
            )
            for device, service in sorted({(r["device"], r["service"]) for r in rows})
        }
        tables.update({s.name: (s.columns, extra[s.name]) for s in self.sources if extra[s.name]})
        self._log_run(values, tables)

    def log_tables(self, tables: dict[str, tuple[Sequence[str], list[dict]]], values: dict) -> None:
        """Log `tables` (name -> (columns, rows), as `tables/<name>`) and scalars to W&B now, at a step of their
        own (the validator's verdicts, once a round). Nothing when W&B is off; the caller keeps its own log."""
        with self._lock:
            if self.run is not None:
                self.step += 1
                self._log_run(values, tables)

    def _log_run(self, values: dict, tables: dict[str, tuple[Sequence[str], list[dict]]]) -> None:
        """One W&B log call at the current step (the lock held); an `Audio` value goes up as a W&B audio clip."""
        try:
            import wandb

            payload: dict = {
                key: wandb.Audio(v.samples, sample_rate=v.sample_rate) if isinstance(v, Audio) else v
                for key, v in values.items()
            }
            for name, (columns, rows) in tables.items():
                data = [[row.get(c) for c in columns] for row in rows]
                payload[f"tables/{name}"] = wandb.Table(columns=list(columns), data=data)
            self.run.log(payload, step=self.step)
        except Exception as error:
            log.warning(
                "W&B logging failed, W&B is off from now on (%s: %s); JSONL continues",
                type(error).__name__,
                str(error)[:200],
            )
            self._finish_wandb()

    def start(self, interval: float) -> None:
        """Flush every `interval` seconds from a daemon thread (the miner has no loop of its own)."""

        def loop():
            while not self._stop.wait(interval):
                self.flush()

        self._thread = threading.Thread(target=loop, name="telemetry", daemon=True)
        self._thread.start()

    def _finish_wandb(self) -> None:
        run, self.run = self.run, None
        if run is not None:
            try:
                run.finish()
            except Exception as error:
                log.warning("W&B finish failed: %s", error)

    def close(self) -> None:
        """Stop the flush thread, write the final record and finish W&B (once; later calls do nothing)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
        self.flush()
        self._finish_wandb()


def open_telemetry(
    settings: TelemetrySettings,
    timer: Timer,
    *,
    role: str,
    hotkey: str,
    uid: Optional[int],
    device: dict,
    default_dir: str,
    sources: Sequence[Source] = (),
    **config_extra,
) -> Telemetry:
    """Telemetry as the settings say; the run config carries role, hotkey, uid, device and version (and
    `config_extra`: the netuid and network, a miner's pool of devices)."""
    config = {
        "role": role,
        "hotkey": hotkey,
        "uid": uid,
        "device": device,
        "version": package_version(),
        **config_extra,
    }
    return Telemetry(timer, settings.dir or default_dir, config, settings.wandb, sources)


async def lookup_uid(chain, hotkey: str) -> Optional[int]:
    """This hotkey's uid for the run config, or None (not registered, chain unreachable)."""
    try:
        metagraph = await chain.metagraph()
        return next((n.uid for n in metagraph.neurons if n.hotkey == hotkey), None)
    except Exception as error:
        log.warning("uid lookup for the run config failed: %s", error)
        return None
    finally:
        await chain.close()
