"""A miner's self-check (`audionet-miner check`): would this miner earn? The miner as a validator reaches it,
one finding a line.

Registration and the endpoint on chain against where the miner listens; a signed health round trip through
the published endpoint; then each service it serves answers prompts drawn as a validator draws them, signed
by the miner's own hotkey (its app admits it last in the line), and the validator's Judge scores them as one
round (`round.score_round`: the same gates, duplicates and evaluators). The reference backend's answers to the
same prompts are judged in the same run (not remembered, so a miner that runs it is not a copy of them), and
each service's verdict says what the curve would pay (`check_verdict.py`). The Judge's listening noise is drawn
from `--check.seed` where given (a run with the same seed and answers judges the same), else from fresh randomness:
a check reproduces a validator's verdict only within that noise (docs/miner.md). The miner is ready when nothing about
it as a whole failed and at least one service would earn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Optional

import httpx
import numpy as np

from audionet.lib.core.config import Settings, positive_int, setting
from audionet.lib.core.errors import BackendError, clean_line
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.listening import seeds_from
from audionet.lib.services import registry
from audionet.lib.validator.check_verdict import Finding, Reference, service_findings
from audionet.lib.validator.client import HEALTH_TIMEOUT_S, MinerClient, Target, connection_limits, failure
from audionet.lib.validator.round import score_round

# the check waits this long for the signed health where a validator waits HEALTH_TIMEOUT_S: on a loaded host a
# slow health is a warning to read, not the end of the check
HEALTH_PATIENCE_S = 60.0


@dataclass(frozen=True)
class CheckSettings(Settings):
    """self-check"""

    answers: int = setting("check.answers", 5, type=positive_int, help="prompts each service answers")
    seed: Optional[int] = setting(
        "check.seed",
        None,
        type=int,
        help="seed for the prompts and the Judge's listening noise (default: fresh randomness)",
    )
    timeouts: dict = setting(
        "check.timeout",
        per_service="timeout_s",
        type=float,
        help="{title}: the validator's timeout to hold answers to, s",
    )
    references: dict = setting(
        "check.reference",
        per_service="offline_backend",
        help="{title}: the backend whose answers to the same prompts are the reference the curve pays against "
        "(default: the best offline one)",
    )
    hotkey: str = ""  # the miner's (from its wallet)
    listen: str = ""  # "ip:port" the miner's flags publish


def chain_findings(metagraph, hotkey: str, listen: str) -> tuple[list[Finding], Optional[Target]]:
    """Registration and the endpoint; the target to reach (the published endpoint), None when unregistered."""
    neuron = next((n for n in metagraph.neurons if n.hotkey == hotkey), None)
    if neuron is None:
        return [Finding("FAIL", "registration", f"hotkey {hotkey} is not registered on this subnet")], None
    found = [Finding("ok", "registration", f"uid {neuron.uid}, hotkey {hotkey}")]
    if not neuron.axon:
        found.append(Finding("FAIL", "endpoint", f"none on chain; the miner publishes {listen} when it starts"))
    elif neuron.axon != listen:
        found.append(Finding("FAIL", "endpoint", f"{neuron.axon} on chain, but the flags say {listen}"))
    else:
        found.append(Finding("ok", "endpoint", f"{neuron.axon} on chain, where the flags say the miner listens"))
    return found, Target(neuron.uid, hotkey, neuron.axon or listen)


def health_finding(known: Sequence[str], took_s: float) -> Finding:
    """The signed health's line: the scored services the miner serves (`known`), and a warning where a validator
    would not have waited for it (it then asks for every service: the miner still earns, at the cost of a request
    per service)."""
    text = f"signed by the miner; it serves {', '.join(known) or 'nothing the validators score'}"
    if not known:
        return Finding("FAIL", "health", text)
    if took_s > HEALTH_TIMEOUT_S:
        text += f" (in {took_s:.1f} s: a validator waits {HEALTH_TIMEOUT_S:g} s, then asks for every service)"
        return Finding("warn", "health", text)
    return Finding("ok", "health", text)


def reference_for(service, spec: str, requests: Sequence, judge: Judge, seeds: Callable[[], int]) -> Reference:
    """The reference backend's mean score over `requests` (a worker thread; its answers are not remembered)."""
    try:
        backend = service.load_backend(spec)
        jobs = [service.job(request, service.generate(backend, request), "reference") for request in requests]
    except (BackendError, ValueError, RuntimeError) as error:
        return Reference(spec, None, clean_line(error, 300))
    verdicts = judge.score(service.judging, jobs, remember=False, seeds=seeds)
    return Reference(spec, fmean(0.0 if v.gate else v.score for v in verdicts))


async def run_check(chain, wallet, settings: CheckSettings, judge: Judge, sources: Mapping) -> list[Finding]:
    """Every finding, in order; stops early where a validator could not go on (unregistered, no health)."""
    metagraph = await chain.metagraph()
    findings, target = chain_findings(metagraph, settings.hotkey, settings.listen)
    if target is None:
        return findings
    async with httpx.AsyncClient(limits=connection_limits()) as http:
        client = MinerClient(wallet, http)
        started = time.perf_counter()
        try:
            served = await client.services(target, HEALTH_PATIENCE_S)
        except Exception as error:
            why = failure(error, HEALTH_PATIENCE_S, target)
            return [*findings, Finding("FAIL", "health", f"no signed answer from {target.endpoint}/v1/health: {why}")]
        known = sorted(served & set(registry.names()))
        findings.append(health_finding(known, time.perf_counter() - started))
        rng, seeds = np.random.default_rng(settings.seed), seeds_from(settings.seed)
        for name in known:
            service = registry.get(name)
            timeout = settings.timeouts.get(name, service.timeout_s)
            requests = [service.draw(rng, sources.get(name)) for _ in range(settings.answers)]
            # one at a time: each answer's time is the miner's alone
            answers = [await client.query(target, service, request, timeout) for request in requests]
            spec = settings.references.get(name, service.offline_backend)
            reference = await asyncio.to_thread(reference_for, service, spec, requests, judge, seeds)
            scored = await asyncio.to_thread(score_round, answers, judge, {name: service}, None, seeds)
            findings += service_findings(name, scored, timeout, service.judging, reference)
    return findings
