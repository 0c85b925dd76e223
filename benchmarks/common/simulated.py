"""Simulated devices, for CPU-only tests and benchmarks of the device pool (never for a miner).

This machine has no GPU, so a "device" of another speed is a real backend on the CPU whose every
call is padded to `slowdown` x its own time (or to `slowdown` x `seconds_per_audio_s` x the audio it
made, whichever is longer: with a floor the simulated speed no longer depends on how busy the CPU
is). Each simulated device has one compute unit: its calls run one at a time, so more requests at
once on it queue instead of running free, as on a GPU that one request already saturates.

Everything these replicas measure is labelled: the label is `<cpu slug>-simulated-<N>x`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from audionet.lib.core.devices import device_slug
from audionet.lib.miner.pool import LocalReplica
from audionet.models.base import Backend, MusicGenerator, SpeechSynthesizer, VoiceCloner

INTERFACES = (SpeechSynthesizer, VoiceCloner, MusicGenerator)
NOTE = (
    "**simulated devices** (no GPU here): a real backend on this CPU padded to N x its time, one request at a "
    "time per device; the timings model devices of different speed, they are not GPU measurements"
)


class _Simulated:
    def __init__(self, inner: Backend, slowdown: float, seconds_per_audio_s: float = 0.0):
        if slowdown < 1.0:
            raise ValueError("a simulated device can only be slower than the CPU it runs on (slowdown >= 1)")
        self.inner, self.slowdown, self.floor = inner, slowdown, seconds_per_audio_s
        self.model_id, self.device = inner.model_id, inner.device
        self.voices, self.presets, self.preset = getattr(inner, "voices", ()), inner.presets, inner.preset
        self.lock = threading.Lock()  # one compute unit

    def _padded(self, call, *args, **kwargs):
        with self.lock:
            started = time.perf_counter()
            audio = call(*args, **kwargs)
            took = time.perf_counter() - started
            target = self.slowdown * max(took, self.floor * audio.seconds)
            time.sleep(max(0.0, target - (time.perf_counter() - started)))
        return audio


def simulated(backend: Backend, slowdown: float, seconds_per_audio_s: float = 0.0) -> Backend:
    """`backend` on a simulated device `slowdown` times slower (same interface, same answers)."""
    interface = next(i for i in INTERFACES if isinstance(backend, i))

    def wrap(name: str):
        return lambda self, *args, **kwargs: self._padded(getattr(self.inner, name), *args, **kwargs)

    methods = {name: wrap(name) for name in interface.__abstractmethods__}
    cls = type(f"Simulated{interface.__name__}", (_Simulated, interface), methods)
    return cls(backend, slowdown, seconds_per_audio_s)


def label(slowdown: float) -> str:
    return f"{device_slug('cpu')}-simulated-{slowdown:g}x"


def simulated_replicas(
    service,
    spec: str,
    slowdowns: Sequence[float],
    parallel: Sequence[int],
    seconds_per_audio_s: float = 0.0,
) -> list[LocalReplica]:
    """One replica per simulated device, each with its own copy of `spec` loaded on the CPU."""
    replicas = []
    for n, (slowdown, count) in enumerate(zip(slowdowns, parallel)):
        backend = simulated(service.load_backend(spec, device="cpu"), slowdown, seconds_per_audio_s)
        name = label(slowdown) + (f"-r{n + 1}" if list(slowdowns).count(slowdown) > 1 else "")
        replicas.append(LocalReplica(service, backend, count, name, name))
    return replicas
