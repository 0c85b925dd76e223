"""The replicas the pool settings ask for (`lib/miner/pool/settings.py`): local ones here, Ray actors in
`ray_actors` (which imports Ray itself only when it is asked for)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Optional

from audionet.lib.core.devices import describe_device, device_labels, resolve_devices
from audionet.lib.core.timing import Timer
from audionet.lib.miner.pool.dispatcher import Pool
from audionet.lib.miner.pool.ray_actors import ray_replicas
from audionet.lib.miner.pool.replica import LocalReplica, Replica
from audionet.lib.miner.pool.settings import PoolSettings
from audionet.lib.services import registry
from audionet.models.base import Backend

POOL_LABEL = "pool"  # the miner-wide timing device when replicas run on several devices


def local_replicas(service, backends: Sequence[Backend], parallel: Sequence[int]) -> list[Replica]:
    """One LocalReplica per loaded backend, labelled by the device it actually runs on (a backend may
    fall back, e.g. Kokoro to the CPU when onnxruntime has no CUDA provider)."""
    labels = device_labels([backend.device for backend in backends])
    return [
        LocalReplica(service, backend, count, label, describe_device(backend.device).slug)
        for backend, count, label in zip(backends, parallel, labels)
    ]


def from_backends(backends: Mapping[str, Backend], timer: Optional[Timer] = None) -> Pool:
    """{service: backend} -> a pool of one single-slot replica each, with the default line (tests and tools that
    load one backend); `timer` defaults to one named after the replicas' device."""
    replicas = {name: local_replicas(registry.get(name), [backend], [1]) for name, backend in backends.items()}
    return Pool(replicas, timer or Timer("miner", device=pool_label(replicas)))


def build_replicas(settings: PoolSettings, models: Mapping[str, registry.ModelChoice]) -> dict[str, list[Replica]]:
    """Every replica the settings ask for: for each service in `models`, one per device, each with its
    parallel count, loaded with its model spec and preset."""
    if settings.backend == "ray":
        return ray_replicas(settings, models)
    devices = resolve_devices(settings.devices, flag="--pool.devices")
    replicas = {}
    for name, model in models.items():
        service = registry.get(name)
        parallel = settings.parallel_counts(name, len(devices))
        backends = [
            service.load_backend(model.spec, device=d, dtype=settings.dtype, preset=model.preset) for d in devices
        ]
        replicas[name] = local_replicas(service, backends, parallel)
    return replicas


def pool_label(replicas: Mapping[str, Sequence[Replica]]) -> str:
    """The timer's own device: the one device label when every replica shares it, else "pool"."""
    labels = {replica.name for group in replicas.values() for replica in group}
    return labels.pop() if len(labels) == 1 else POOL_LABEL
