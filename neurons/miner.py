"""audionet miner: serves every registered service (/v1/tts, /v1/vc, /v1/music) over signed HTTP.

    python neurons/miner.py --netuid 16 --subtensor.network finney \
        --wallet.name my_cold --wallet.hotkey my_hot --axon.port 8091 --axon.external_ip 203.0.113.7
    audionet-miner check <the same flags>    # is it ready? (neurons/check.py)
"""

from __future__ import annotations

import asyncio
import sys

from audionet.lib.core.neuron import run_entry_point
from audionet.lib.miner.settings import build_parser
from audionet.lib.services import registry

STOP_GRACE_S = 2


async def publish(chain, ip: str, port: int) -> None:
    """Publish the endpoint, then drop the connection: it belongs to this
    short-lived event loop, and uvicorn's loop reconnects lazily."""
    try:
        await chain.serve(ip, port)
    finally:
        await chain.close()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["check"]:  # audionet-miner check <the miner's flags>: neurons/check.py
        from audionet.neurons.check import main as check

        return check(argv[1:])
    return run_entry_point("miner", build_parser(), run, argv)


def run(args, log) -> int:

    from audionet.lib.core.auth import AccessPolicy
    from audionet.lib.core.chain import open_chain
    from audionet.lib.core.devices import describe_device
    from audionet.lib.core.neuron import node_dir
    from audionet.lib.core.telemetry import lookup_uid, open_telemetry
    from audionet.lib.core.telemetry_settings import TelemetrySettings
    from audionet.lib.core.timing import Timer
    from audionet.lib.core.wallet import load_wallet
    from audionet.lib.miner.app import MinerApp
    from audionet.lib.miner.guard import ConnectionGuard
    from audionet.lib.miner.limits import GuardSettings, stake_share
    from audionet.lib.miner.pool import Pool, PoolSettings, build_replicas, pool_label
    from audionet.lib.miner.server import ensure_fd_room, guarded_config, serve, throttle_logs
    from audionet.lib.miner.settings import AxonSettings, MinerSettings, ServingSettings

    # every flag read into its settings before minutes of model loading
    axon, settings, limits = (
        AxonSettings.from_flags(args),
        MinerSettings.from_flags(args),
        GuardSettings.from_flags(args),
    )
    policy = AccessPolicy(
        min_stake=settings.min_stake, require_permit=not settings.allow_no_permit, rate_limit=settings.rate_limit
    )
    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    share = stake_share(policy, wallet.hotkey.ss58_address)  # one function: the guard's places and the line's
    guard = ConnectionGuard(limits, shares=share, backlog=ensure_fd_room(limits.max_connections))
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    served = ServingSettings.from_flags(args).services
    replicas = build_replicas(PoolSettings.from_flags(args), registry.BackendSettings.from_flags(args).choices(served))
    timer = Timer("miner", device=pool_label(replicas))
    pool = Pool(replicas, timer, max_waiting=settings.max_waiting, timeouts=settings.timeouts)
    pool.calibrate()
    device_info = describe_device(pool.replicas()[0].device.split("@")[0])  # a Ray replica: device@node
    hotkey = wallet.hotkey.ss58_address
    if not axon.no_publish:
        if axon.published_ip is None:
            log.error("set --axon.external_ip (the address validators reach) or pass --axon.no_publish")
            return 2
        try:
            asyncio.run(publish(chain, axon.published_ip, axon.published_port))
        except Exception as error:
            log.error("could not publish the endpoint on chain: %s", error)
            return 2
    telemetry_settings = TelemetrySettings.from_flags(args)
    telemetry = open_telemetry(
        telemetry_settings,
        timer,
        role="miner",
        hotkey=hotkey,
        uid=asyncio.run(lookup_uid(chain, hotkey)),
        device=device_info.as_dict(),
        netuid=args.netuid,
        network=args.subtensor_network,
        default_dir=node_dir(args.subtensor_network, args.netuid, args.wallet_hotkey, "miner"),
        pool=[replica.describe() | {"service": replica.service.name} for replica in pool.replicas()],
    )
    miner = MinerApp(
        wallet,
        chain,
        pool,
        policy,
        sync_interval=settings.sync_interval,
        on_stop=telemetry.close,
        guard=guard,
    )
    log.info(
        "hotkey %s serving %s on %s:%d",
        miner.hotkey,
        ", ".join(f"{r.service.name}={r.model_id}@{r.name}x{r.parallel}" for r in pool.replicas()),
        axon.ip,
        axon.port,
    )
    telemetry.start(telemetry_settings.interval_s)
    config = guarded_config(
        guard,
        miner.app(),
        axon.ip,
        axon.port,
        log_level="warning",
        # In-flight requests get this long after SIGTERM; then the lifespan shutdown writes the
        # last timing record, well inside a supervisor's grace period (localnet: 5 s).
        timeout_graceful_shutdown=STOP_GRACE_S,
    )
    throttle_logs()  # after uvicorn's log set-up: hostile traffic logs one line per kind per minute
    try:
        serve(config)
    finally:
        telemetry.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
