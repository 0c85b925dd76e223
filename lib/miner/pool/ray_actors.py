"""Replicas as Ray actors, for a pool larger than one host (`--pool.backend ray`). Ray itself is imported only
then: it is an optional extra (`pip install 'audionet[ray]'`), not a dependency of a single-GPU miner.

Each replica is one actor holding one backend, loaded on the node Ray places it on, taking
`parallel` calls at once (a threaded actor). A GPU replica asks Ray for `--ray.gpus` GPUs: fractions
are allowed, and the default, 1 / number of services, puts one replica of each service on a GPU as
the local pool does. Ray sets CUDA_VISIBLE_DEVICES, so inside the actor its GPU is cuda:0. The
signed HTTP front, the stake line and the dispatcher stay in the miner process; actors only generate
and time their own generation (their stage timings stay in the actor). Every node needs the same
install of audionet and its model files as the miner.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import time
from collections.abc import Mapping

from audionet.lib.core.config import split_list
from audionet.lib.core.devices import describe_device, unique
from audionet.lib.core.errors import ConfigError
from audionet.lib.miner.pool.replica import Replica
from audionet.lib.miner.pool.settings import PoolSettings
from audionet.lib.services import registry
from audionet.lib.services.registry import ModelChoice

log = logging.getLogger("pool")
READY_TIMEOUT_S = 900.0  # loading a large model on a fresh node takes minutes
RESTARTS = 3  # Ray restarts a crashed actor (the backend is loaded again) this many times


class ReplicaActor:
    """What runs inside the actor: load the backend once, then generate."""

    def __init__(self, service: str, spec: str, device: str, dtype: str, preset):
        self.service = registry.get(service)
        self.backend = self.service.load_backend(spec, device=device, dtype=dtype, preset=preset)
        self.info = {
            "model": self.backend.model_id,
            "device": self.backend.device,
            "slug": describe_device(self.backend.device).slug,
            "node": socket.gethostname(),
        }

    def describe(self) -> dict:
        return self.info

    def generate(self, request):
        started = time.perf_counter()
        audio = self.service.generate(self.backend, request)
        return audio, time.perf_counter() - started

    def time_warmup(self) -> float:
        started = time.perf_counter()
        self.backend.warmup()
        return time.perf_counter() - started


class RayReplica(Replica):
    def __init__(self, service, actor, info: dict, parallel: int, label: str):
        device = f"{info['device']}@{info['node']}"
        super().__init__(service, parallel, label, info["slug"], device, info["model"])
        self.actor = actor

    def submit(self, request, stop) -> asyncio.Future:
        # An actor call is not stopped part-way: an abandoned one finishes in its actor, and its slot counts
        # as busy until then.
        del stop
        return asyncio.wrap_future(self.actor.generate.remote(request).future())

    def time_warmup(self) -> float:
        import ray

        return ray.get(self.actor.time_warmup.remote())

    def close(self) -> None:
        import ray

        ray.kill(self.actor)


def connect(address: str):
    """The `ray` module, connected to the cluster at `address` (one line on failure)."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--pool.backend ray needs Ray: pip install 'audionet[ray]'") from None
    if not ray.is_initialized():
        try:
            ray.init(address=address, namespace="audionet", log_to_driver=False)
        except Exception as error:  # ConnectionError, RuntimeError, ValueError: all mean "no cluster there"
            line = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            raise ConfigError(f"cannot connect to Ray at {address}: {line}") from None
    return ray


def ray_devices(text: str, cluster_gpus: float) -> list[str]:
    """--pool.devices for Ray: auto = one replica per GPU of the cluster (else one on a CPU), or a comma
    list of cpu and cuda, one replica each. Ray chooses the GPU, so cuda:N is refused."""
    items = split_list(text)
    if items == ["auto"]:
        return ["cuda"] * int(cluster_gpus) or ["cpu"]
    if not items or any(item not in ("cpu", "cuda") for item in items):
        raise ConfigError(
            f"--pool.devices: with --pool.backend ray give auto, or a comma list of cpu and cuda (one per "
            f"replica; Ray picks the GPU), not {text!r}"
        )
    return items


def ray_replicas(settings: PoolSettings, models: Mapping[str, ModelChoice]) -> dict[str, list[Replica]]:
    """One actor per (listed device, service); blocks until every actor has loaded its backend."""
    ray = connect(settings.ray_address)
    cluster_gpus = float(ray.cluster_resources().get("GPU", 0.0))
    devices = ray_devices(settings.devices, cluster_gpus)
    gpus = settings.ray_gpus if settings.ray_gpus is not None else 1.0 / len(models)
    wanted = gpus * devices.count("cuda") * len(models)
    if wanted > cluster_gpus + 1e-9:
        raise ConfigError(
            f"the pool asks Ray for {wanted:g} GPUs ({devices.count('cuda')} GPU replicas x {len(models)} services x "
            f"--ray.gpus {gpus:g}); the cluster has {cluster_gpus:g}"
        )
    actor_class = ray.remote(ReplicaActor)
    pending = {}
    for name, model in models.items():
        counts = settings.parallel_counts(name, len(devices))
        for device, count in zip(devices, counts):
            resources = {"num_gpus": gpus} if device == "cuda" else {"num_cpus": 1}
            actor = actor_class.options(max_concurrency=count, max_restarts=RESTARTS, **resources).remote(
                name, model.spec, "cuda:0" if device == "cuda" else "cpu", settings.dtype, model.preset
            )
            pending.setdefault(name, []).append((actor, count))
    log.info("waiting for %d Ray replica(s) to load", sum(len(group) for group in pending.values()))
    replicas: dict[str, list[Replica]] = {}
    for name, group in pending.items():
        try:
            infos = ray.get([actor.describe.remote() for actor, _ in group], timeout=READY_TIMEOUT_S)
        except Exception as error:
            line = str(error).strip().splitlines()[-1][:200] if str(error).strip() else type(error).__name__
            raise ConfigError(f"a Ray replica of {name} did not start: {line}") from None
        labels = unique([f"{info['slug']}-{re.sub(r'[^a-z0-9_]+', '-', info['node'].lower())}" for info in infos])
        service = registry.get(name)
        replicas[name] = [
            RayReplica(service, actor, info, count, label) for (actor, count), info, label in zip(group, infos, labels)
        ]
    return replicas
