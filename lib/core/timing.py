"""One timing layer for both roles.

    timer = Timer(role="miner", device="cpu-x86_64-2core")
    with timer.measure("tts", "generation") as m:
        audio = backend.synthesize(text)
        m.audio_seconds = audio.seconds      # known only afterwards
    m.elapsed                                 # what goes into ResponseMeta.generation_s

Every measurement is keyed by (role, service, stage, device) and lands in a
`Series` that keeps lifetime count/sum/min/max plus a rolling window of the
most recent samples (p50/p95 and the window averages come from the window).

On a GPU, work is queued and runs asynchronously: a block that only launches kernels ends long before
they finish. `measure(..., sync=device)` waits for the device's queue at the start and end of the
block (`cuda_synchronize`), so a stage's time is the GPU's time; it costs nothing on the CPU.

Real-time factor (RTF) = seconds of compute / seconds of audio produced or
judged, summed over the measurements that carry an audio length: 0.25 means
one second of audio costs 0.25 s of compute. Its inverse is "x real-time"
(4.0 = four times faster than playback). Both are None with no audio.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

DEFAULT_WINDOW = 256


def cuda_synchronize(device: Optional[str]) -> None:
    """Wait until the GPU work queued on `device` (cuda | cuda:N) is done; a no-op for the CPU, for no
    device, and where torch has not initialised CUDA (then nothing can be queued)."""
    if not device or not device.startswith("cuda"):
        return
    torch = sys.modules.get("torch")  # never imported here: timing CPU work must not load torch
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize(device)


class Key(NamedTuple):
    role: str
    service: str
    stage: str
    device: str


def percentile(values, q: float) -> float:
    """Linear-interpolation percentile (numpy's default), NaN when empty."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else math.nan


@dataclass(frozen=True)
class Stats:
    """A summary of one series. avg/min/max/count are lifetime; window_* and
    p50/p95 cover the rolling window."""

    count: int
    avg_s: float
    min_s: float
    max_s: float
    p50_s: float
    p95_s: float
    window_count: int
    window_avg_s: float
    audio_s: float  # lifetime seconds of audio across measurements that reported it
    rtf: Optional[float]

    @property
    def x_realtime(self) -> Optional[float]:
        return 1.0 / self.rtf if self.rtf else None

    def as_dict(self) -> dict:
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["x_realtime"] = self.x_realtime
        return out


class Series:
    """Samples for one key. Not locked: `Timer` holds the lock."""

    def __init__(self, window: int = DEFAULT_WINDOW):
        self.count = 0
        self.total = 0.0
        self.minimum = math.inf
        self.maximum = -math.inf
        self.timed_with_audio = 0.0  # compute seconds of the samples that reported audio
        self.audio = 0.0
        self.window: deque[float] = deque(maxlen=window)

    def add(self, seconds: float, audio_seconds: Optional[float]) -> None:
        self.count += 1
        self.total += seconds
        self.minimum = min(self.minimum, seconds)
        self.maximum = max(self.maximum, seconds)
        self.window.append(seconds)
        if audio_seconds is not None and audio_seconds > 0:
            self.audio += audio_seconds
            self.timed_with_audio += seconds

    def stats(self) -> Stats:
        window = list(self.window)
        return Stats(
            count=self.count,
            avg_s=self.total / self.count if self.count else math.nan,
            min_s=self.minimum if self.count else math.nan,
            max_s=self.maximum if self.count else math.nan,
            p50_s=percentile(window, 50),
            p95_s=percentile(window, 95),
            window_count=len(window),
            window_avg_s=sum(window) / len(window) if window else math.nan,
            audio_s=self.audio,
            rtf=self.timed_with_audio / self.audio if self.audio > 0 else None,
        )


class Measurement:
    """Handed out by `Timer.measure`; set `audio_seconds` inside the block if
    it is known only then. `elapsed` is final once the block exits."""

    def __init__(self, audio_seconds: Optional[float], extra: dict):
        self.audio_seconds = audio_seconds
        self.extra = extra
        self.started = time.perf_counter()
        self.elapsed = 0.0
        self.failed = False


class _Measure:
    def __init__(
        self,
        timer: Timer,
        service: str,
        stage: str,
        device: Optional[str],
        audio_seconds: Optional[float],
        extra: dict,
        sync: Optional[str] = None,
    ):
        self.timer, self.service, self.stage, self.device, self.sync = timer, service, stage, device, sync
        self.measurement = Measurement(audio_seconds, extra)

    def __enter__(self) -> Measurement:
        cuda_synchronize(self.sync)  # earlier queued work is not this block's
        self.measurement.started = time.perf_counter()
        return self.measurement

    def __exit__(self, kind, _value, _traceback) -> bool:
        m = self.measurement
        cuda_synchronize(self.sync)  # the block's own queued work is
        m.elapsed = time.perf_counter() - m.started
        m.failed = kind is not None
        # A failed call's time says nothing about the service's speed: counted apart.
        stage = f"{self.stage}/failed" if m.failed else self.stage
        self.timer.record(
            self.service, stage, m.elapsed, audio_seconds=None if m.failed else m.audio_seconds, device=self.device
        )
        return False


class Timer:
    """Thread-safe registry of series (the miner calls backends from worker threads)."""

    def __init__(self, role: str, device: str = "cpu", window: int = DEFAULT_WINDOW):
        self.role, self.device, self.window = role, device, window
        self._series: dict[Key, Series] = {}
        self._lock = threading.Lock()

    def measure(
        self,
        service: str,
        stage: str,
        audio_seconds: Optional[float] = None,
        *,
        device: Optional[str] = None,
        sync: Optional[str] = None,
        **extra,
    ) -> AbstractContextManager[Measurement]:
        """Time the `with` block as one sample of (role, service, stage, device); `sync`: the CUDA device
        whose queued work the block's time must include (module docstring)."""
        return _Measure(self, service, stage, device, audio_seconds, extra, sync)

    def record(
        self,
        service: str,
        stage: str,
        seconds: float,
        audio_seconds: Optional[float] = None,
        *,
        device: Optional[str] = None,
    ) -> None:
        """Add a sample measured elsewhere (e.g. a round trip timed by the client)."""
        if not math.isfinite(seconds) or seconds < 0:
            return
        key = Key(self.role, service, stage, device or self.device)
        with self._lock:
            series = self._series.get(key)
            if series is None:
                series = self._series[key] = Series(self.window)
            series.add(seconds, audio_seconds)

    def stage_hook(
        self, service: str, prefix: str = "generation", device: Optional[str] = None, sync: Optional[str] = None
    ) -> Callable[[str], AbstractContextManager]:
        """What a backend's `measure` attribute gets: stage name -> timing context (keyed by the
        backend's own `device` when several devices share this timer; `sync`: the backend's CUDA device)."""
        return lambda stage: self.measure(service, f"{prefix}/{stage}", device=device, sync=sync)

    def snapshot(self) -> dict[Key, Stats]:
        with self._lock:
            return {key: series.stats() for key, series in sorted(self._series.items())}

    def samples(self, service: str, stage: str) -> list[float]:
        """The rolling window of one key on this timer's device (benchmarks read raw runs from it)."""
        with self._lock:
            series = self._series.get(Key(self.role, service, stage, self.device))
            return list(series.window) if series else []

    def __iter__(self) -> Iterator[Key]:
        return iter(self.snapshot())


def scalar_key(key: Key, field: str, own_device: Optional[str] = None) -> str:
    """The names W&B and the JSONL log use: `timing/<service>/<stage>/<field>` for the timer's own
    device (the whole node), `device/<device>/<service>/<stage>/<field>` for a sample keyed to another
    device (one replica of a miner's device pool), so several GPUs never write to one key."""
    if own_device is None or key.device == own_device:
        return f"timing/{key.service}/{key.stage}/{field}"
    return f"device/{key.device}/{key.service}/{key.stage}/{field}"


SCALAR_FIELDS = ("avg_s", "min_s", "max_s", "p50_s", "p95_s", "count", "rtf")


def scalars(snapshot: dict[Key, Stats], own_device: Optional[str] = None) -> dict[str, float]:
    """Flat scalar dict for one interval; None values (no audio, so no RTF) are left out.
    `own_device`: the timer's device (see `scalar_key`); None names every key `timing/...`."""
    out: dict[str, float] = {}
    for key, stats in snapshot.items():
        for field in SCALAR_FIELDS:
            value = getattr(stats, field)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                out[scalar_key(key, field, own_device)] = value
    return out
