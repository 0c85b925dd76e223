"""audionet miner: serves /v1/tts, /v1/vc and /v1/music over signed HTTP.

    python neurons/miner.py --netuid 16 --subtensor.network finney \
        --wallet.name my_cold --wallet.hotkey my_hot --axon.port 8091 --axon.external_ip 203.0.113.7
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys

if __package__ in (None, ""):  # `python neurons/miner.py` from a checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.config import add_common_flags, flag, positive_int, run_entry_point
from lib.telemetry import add_telemetry_flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="audionet-miner", description=__doc__.split("\n")[0])
    add_common_flags(parser)
    axon = parser.add_argument_group("axon (HTTP server)")
    flag(axon, "axon.ip", default="0.0.0.0", help="address to bind")
    flag(axon, "axon.port", type=int, default=8091, help="port to bind")
    flag(axon, "axon.external_ip", default=None,
         help="address published on chain (default: --axon.ip unless it is 0.0.0.0)")
    flag(axon, "axon.external_port", type=int, default=None, help="port published on chain (default: --axon.port)")
    flag(axon, "axon.no_publish", action="store_true", help="do not publish the endpoint on chain at start")
    models = parser.add_argument_group("models")
    flag(models, "tts.model", default="baseline:espeak", help="TTS backend spec")
    flag(models, "vc.model", default="baseline:world", help="voice-clone backend spec")
    flag(models, "music.model", default="baseline:synth", help="music backend spec")
    flag(models, "services", default="tts,vc,music", help="comma-separated services to serve")
    flag(models, "device", default="auto", help="auto | cpu | cuda | cuda:N")
    flag(models, "dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"],
         help="auto: bfloat16 on CUDA where supported, else float16; float32 on CPU")
    flag(models, "music.preset", default="balanced", choices=["fast", "balanced", "quality"],
         help="with --music.model hf:musicgen: the checkpoint (small/medium/large)")
    flag(models, "vc.preset", default="balanced", choices=["fast", "balanced", "quality"],
         help="with --vc.model kokoro-clone: nearest voice / blend + pitch match / best of 3 candidates")
    policy = parser.add_argument_group("access policy and load")
    flag(policy, "miner.min_stake", type=float, default=0.0, help="minimum caller stake")
    flag(policy, "miner.allow_no_permit", action="store_true", help="accept callers without a validator permit")
    flag(policy, "miner.rate_limit", type=positive_int, default=120, help="requests per minute per caller hotkey")
    flag(policy, "miner.concurrency", type=positive_int, default=1, help="requests generated at once per service")
    flag(policy, "miner.max_waiting", type=int, default=8, help="requests allowed to wait per service (then 503)")
    flag(policy, "miner.sync_interval", type=float, default=60.0, help="seconds between metagraph syncs")
    add_telemetry_flags(parser)
    return parser


async def publish(chain, ip: str, port: int) -> None:
    """Publish the endpoint, then drop the connection: it belongs to this
    short-lived event loop, and uvicorn's loop reconnects lazily."""
    try:
        await chain.serve(ip, port)
    finally:
        await chain.close()


def main(argv=None) -> int:
    return run_entry_point("miner", build_parser(), run, argv)


def run(args, log) -> int:
    import uvicorn

    from lib.auth import AccessPolicy
    from lib.chain import open_chain
    from lib.gpu import describe_device, resolve_device
    from lib.miner_app import MinerService
    from lib.telemetry import lookup_uid, open_telemetry
    from lib.timing import Timer
    from lib.wallet import load_wallet
    from models.registry import load_backend

    wallet = load_wallet(args.wallet_name, args.wallet_hotkey, args.wallet_path)
    chain = open_chain(args.subtensor_network, args.netuid, wallet)
    device = resolve_device(args.device)
    services = [s.strip() for s in args.services.split(",") if s.strip()]
    backends = {s: load_backend(s, getattr(args, f"{s}_model"), device=device, dtype=args.dtype,
                                preset=getattr(args, f"{s}_preset", None)) for s in services}
    policy = AccessPolicy(
        min_stake=args.miner_min_stake, require_permit=not args.miner_allow_no_permit, rate_limit=args.miner_rate_limit
    )
    device_info = describe_device(device)
    timer = Timer("miner", device=device_info.slug)
    service = MinerService(
        wallet, chain, backends, policy, concurrency=args.miner_concurrency,
        max_waiting=args.miner_max_waiting, sync_interval=args.miner_sync_interval, timer=timer,
    )
    external_ip = args.axon_external_ip or (None if args.axon_ip == "0.0.0.0" else args.axon_ip)
    if not args.axon_no_publish:
        if external_ip is None:
            log.error("set --axon.external_ip (the address validators reach) or pass --axon.no_publish")
            return 2
        try:
            asyncio.run(publish(chain, external_ip, args.axon_external_port or args.axon_port))
        except Exception as error:
            log.error("could not publish the endpoint on chain: %s", error)
            return 2
    log.info("hotkey %s serving %s on %s:%d", service.hotkey, ", ".join(
        f"{s}={b.model_id}@{b.device}" for s, b in backends.items()), args.axon_ip, args.axon_port)
    network = "offline" if args.subtensor_network.startswith("offline:") else args.subtensor_network
    hotkey_dir = f"{network}-{args.netuid}-{args.wallet_hotkey}".replace("/", "_").replace(":", "_")
    telemetry = open_telemetry(args, timer, role="miner", hotkey=service.hotkey,
                               uid=asyncio.run(lookup_uid(chain, service.hotkey)), device=device_info.as_dict(),
                               default_dir=os.path.expanduser(f"~/.audionet/miner-{hotkey_dir}"))
    telemetry.start(args.telemetry_interval)
    config = uvicorn.Config(service.app(), host=args.axon_ip, port=args.axon_port, log_level="warning",
                            timeout_keep_alive=30)
    try:
        uvicorn.Server(config).run()
    finally:
        telemetry.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
