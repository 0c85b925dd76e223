"""Sinks for the timing layer: a local JSONL file (always) and W&B (optional, lib/core/wandb_sink.py).

Every `flush()` writes one JSONL record and, when W&B is on, logs the scalar
keys `timing/<service>/<stage>/avg_s|min_s|max_s|p50_s|p95_s|count|rtf` plus a
`wandb.Table` per device and service (`tables/<device>/<service>`).

Telemetry never breaks a neuron: a W&B failure is one warning line and W&B is
switched off for the rest of the run; the JSONL file keeps going. The flags:
lib/core/telemetry_settings.py.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Optional, Protocol

from audionet.lib.core.telemetry_settings import TelemetrySettings, WandbSettings
from audionet.lib.core.timing import Key, Stats, Timer, scalars
from audionet.lib.core.wandb_sink import finish_run, log_to_run, start_run

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


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("audionet")
    except Exception:
        return "unknown"


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
            self.run = start_run(wandb_settings, self.config, log_dir, self.jsonl_path)

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
        """One W&B log call at the current step (the lock held); W&B is off from the first that fails."""
        if not log_to_run(self.run, values, tables, self.step):
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
            finish_run(run)

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
