"""Simulated devices, for CPU-only tests and benchmarks of the miner's device pool and the validator's evaluator
replicas (never for a miner or a validator).

This machine has no GPU, so a "device" of another speed is a real model on the CPU whose every call is padded
to `slowdown` x its own time (or to `slowdown` x `seconds_per_audio_s` x the audio it made or judged, whichever
is longer: with a floor the simulated speed no longer depends on how busy the CPU is). Each simulated device has
one compute unit (`Unit`): its calls run one at a time, so more work at once on it queues instead of running
free, as on a GPU that one request already saturates. A simulated evaluator set (`simulated_evaluators`) puts
every evaluator of one set on one unit; work of the Judge outside the evaluators (gates, F0, fingerprints) runs
on the CPU unpadded, as a validator's does beside its GPUs.

Everything these replicas measure is labelled: the label is `<cpu slug>-simulated-<N>x`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from audionet.lib.core.audio import Audio
from audionet.lib.core.devices import device_slug
from audionet.lib.miner.pool import LocalReplica
from audionet.models.base import Backend, MusicGenerator, SpeechSynthesizer, VoiceCloner

INTERFACES = (SpeechSynthesizer, VoiceCloner, MusicGenerator)
NOTE = (
    "**simulated devices** (no GPU here): a real backend on this CPU padded to N x its time, one request at a "
    "time per device; the timings model devices of different speed, they are not GPU measurements"
)


class Unit:
    """One simulated device's compute unit: its calls run one at a time, each padded to
    `slowdown` x max(its own time, `seconds_per_audio_s` x the audio seconds of the call)."""

    def __init__(self, slowdown: float, seconds_per_audio_s: float = 0.0):
        if slowdown < 1.0:
            raise ValueError("a simulated device can only be slower than the CPU it runs on (slowdown >= 1)")
        self.slowdown, self.floor = slowdown, seconds_per_audio_s
        self.lock = threading.Lock()

    def run(self, call: Callable[[], Any], audio_seconds: Callable[[Any], float]) -> Any:
        """`call()`, padded; `audio_seconds(result)`: the audio it made or judged."""
        with self.lock:
            started = time.perf_counter()
            out = call()
            took = time.perf_counter() - started
            target = self.slowdown * max(took, self.floor * audio_seconds(out))
            time.sleep(max(0.0, target - (time.perf_counter() - started)))
        return out


class _Simulated:
    def __init__(self, inner: Backend, slowdown: float, seconds_per_audio_s: float = 0.0):
        self.inner, self.unit = inner, Unit(slowdown, seconds_per_audio_s)
        self.model_id, self.device = inner.model_id, inner.device
        self.voices, self.presets, self.preset = getattr(inner, "voices", ()), inner.presets, inner.preset

    def _padded(self, call, *args, **kwargs):
        return self.unit.run(lambda: call(*args, **kwargs), lambda audio: audio.seconds)


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


class _PaddedEvaluator:
    """An evaluator whose calls on audio (`transcribe`, `predict`, `embed`, ...) run on a simulated device's unit,
    padded by the seconds of audio they judge; everything else (its name, model id) is the evaluator's own."""

    def __init__(self, inner, unit: Unit):
        self._inner, self._unit = inner, unit

    def __getattr__(self, name: str):
        value = getattr(self._inner, name)
        if not callable(value) or name.startswith("_"):
            return value

        def padded(*args, **kwargs):
            clips = [
                a for arg in args for a in (arg if isinstance(arg, (list, tuple)) else [arg]) if isinstance(a, Audio)
            ]
            seconds = sum(clip.seconds for clip in clips)
            return self._unit.run(lambda: value(*args, **kwargs), lambda _out: seconds)

        return padded


def simulated_evaluators(evaluators, slowdown: float, seconds_per_audio_s: float = 0.0):
    """A loaded evaluator set (`models.eval.profiles.Evaluators`) on one simulated device: every evaluator of the
    set, the VAD included, shares the device's one unit (same models, same measures)."""
    from audionet.models.eval.profiles import Evaluators

    unit = Unit(slowdown, seconds_per_audio_s)

    def wrap(value):
        if isinstance(value, tuple):
            return tuple(wrap(v) for v in value)
        return None if value is None else _PaddedEvaluator(value, unit)

    by_kind = {kind: wrap(value) for kind, value in evaluators.by_kind.items()}
    return Evaluators(by_kind, wrap(evaluators.vad), wrap(evaluators.music_quality), evaluators.device)
