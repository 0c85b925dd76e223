"""One validator round against many loopback miners: a few real baseline miners, the rest misbehaving
(`badminers.py`). The round must end within its deadline, every bad miner must get 0 and honest ones more."""

from __future__ import annotations

import asyncio
import math
import os
import time

import httpx

from audionet.lib.core.chain import OfflineChain
from audionet.lib.core.wallet import create_wallet
from audionet.lib.localnet import NETUID, LocalNet, tail
from audionet.lib.services import TTS
from audionet.lib.validator.client import MinerClient
from audionet.lib.validator.loop import Validator, ValidatorSettings
from tests.stress.badminers import BEHAVIOURS, BadMinerServers, enlist

HONEST_MODEL = "kokoro:"  # the offline TTS backend with real weights


async def _round(validator: Validator) -> tuple[list, float]:
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits) as http:
        started = time.perf_counter()
        scored = await validator.run_round(MinerClient(validator.wallet, http))
        return scored, time.perf_counter() - started


def run_round(
    workdir: str,
    miners: int = 64,
    honest: int = 4,
    timeout: float = TTS.timeout_s,
    scoring_budget: float = 40.0,
    judge=None,
) -> dict:
    """A TTS round over `miners` miners, `honest` of them real baseline miner processes; deadline: the
    request timeout plus `scoring_budget` seconds for scoring, saving and setting weights."""
    from audionet.lib.scoring.judge import Judge

    net = LocalNet(workdir)
    net.add_validator()
    wallet = create_wallet("validator", "default", net.wallets)
    stranger = create_wallet("stranger", "default", net.wallets)
    # Honest = a real TTS model: espeak says the prompts' names and tongue-twisters so badly that the content
    # factor (WER near 1) rightly pays it nothing on some rounds, which would say nothing about transport.
    real = [net.add_miner(f"honest{i}", {"tts": HONEST_MODEL}, ("--services", "tts")) for i in range(honest)]
    behaviours = [BEHAVIOURS[index % len(BEHAVIOURS)] for index in range(miners - honest)]
    bad = enlist(net.chain_path, NETUID, net.wallets, behaviours, wallet.hotkey.ss58_address, timeout, stranger)
    try:
        judge = judge or Judge.load(devices="cpu")
        net.wait_ready()
        settings = ValidatorSettings(
            state_dir=os.path.join(workdir, "validator"),
            sample_size=miners,
            round_budget_s=math.inf,  # every miner in the one round
            epoch_length=1,
            services=("tts",),
            timeouts={"tts": timeout},
            seed=5,
            eligible_after=1,
            ready_error=math.inf,  # one round: every miner is judged on it
        )
        validator = Validator(wallet, OfflineChain(net.chain_path, NETUID, wallet=wallet), settings, judge=judge)
        with BadMinerServers(bad):
            scored, duration = asyncio.run(_round(validator))
        weights = net.chain.weights(net.validator_uid)
    finally:
        net.stop()
    by_uid = {item.answer.target.uid: item for item in scored}
    uids = {m.hotkey: m.uid for m in real}
    rows = []
    for name, behaviour, hotkey in [(m.name, f"honest ({HONEST_MODEL})", m.hotkey) for m in real] + [
        (m.name, m.behaviour, m.wallet.hotkey.ss58_address) for m in bad
    ]:
        uid = uids.get(hotkey)
        if uid is None:
            uid = next(u for u, item in by_uid.items() if item.answer.target.hotkey == hotkey)
        item = by_uid[uid]
        rows.append(
            {
                "name": name,
                "behaviour": behaviour,
                "uid": uid,
                "reward": item.reward,
                "gate": item.gate,
                "latency_s": item.answer.latency_s,
                "weight": weights.get(uid, 0.0),
            }
        )
    deadline = timeout + scoring_budget
    return {
        "miners": miners,
        "honest": honest,
        "queried": len(scored),
        "timeout_s": timeout,
        "deadline_s": deadline,
        "duration_s": duration,
        "max_latency_s": max(r["latency_s"] for r in rows),
        "within_deadline": duration <= deadline,
        "bad_nonzero": [r["name"] for r in rows if not r["behaviour"].startswith("honest") and r["reward"] != 0],
        # Honest answers must arrive and be judged; one may still earn 0 on its merits (the offline
        # profile's Whisper tiny can miss a tongue-twister entirely), but honest miners must be paid.
        "honest_gated": [
            f"{r['name']}: {r['gate']}" for r in rows if r["behaviour"].startswith("honest") and r["gate"]
        ],
        "honest_weight": sum(r["weight"] for r in rows if r["behaviour"].startswith("honest")),
        # A refused honest answer says little from the validator's side (a ReadError has no text): the miner's log
        # tail says what its server did with the request.
        "honest_logs": {m.name: tail(m.log_path, 15) for m in real if by_uid[uids[m.hotkey]].gate},
        "rows": rows,
    }
