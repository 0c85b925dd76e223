"""The miner's device pool: one model replica per (device, service), per-device parallel counts,
speed-weighted earliest-finish dispatch behind the stake-ordered waiting line, and Ray actors as
replicas for more than one host (`ray_actors`; Ray itself is imported only with --pool.backend ray).

    replicas = build_replicas(PoolSettings.from_flags(args), registry.BackendSettings.from_flags(args).choices(services))
    pool = Pool(replicas, Timer("miner", device=pool_label(replicas)))
    async with pool.place("tts", caller) as place:   # what the miner awaits (`dispatcher.Pool`)
        audio, elapsed, hardware, model, name = await place.generate(await place.parse(body))
"""

from audionet.lib.miner.pool.build import build_replicas, device_labels, from_backends, local_replicas, pool_label
from audionet.lib.miner.pool.dispatcher import Place, Pool, ServiceDispatcher
from audionet.lib.miner.pool.replica import LocalReplica, Replica, Result
from audionet.lib.miner.pool.settings import MINER_ONLY, PoolSettings

__all__ = [
    "MINER_ONLY",
    "LocalReplica",
    "Place",
    "Pool",
    "Replica",
    "Result",
    "ServiceDispatcher",
    "build_replicas",
    "device_labels",
    "from_backends",
    "PoolSettings",
    "local_replicas",
    "pool_label",
]
