"""A miner's self-check (`audionet-miner check`): the miner as a validator reaches it, one finding a line.

Registration and the endpoint on chain against where the miner listens; a signed health round trip through
the published endpoint; then each service it serves answers prompts drawn as a validator draws them, signed
by the miner's own hotkey (its app admits it last in the line), and the validator's Judge scores them as one
round (`round.score_round`: the same gates, duplicates and evaluators). A finding is `ok`, `warn` (it works,
but close to a limit) or `FAIL` (a validator would score it 0); the miner is ready when nothing fails.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Optional

import httpx
import numpy as np

from audionet.lib.scoring.judge import GATES, Judge
from audionet.lib.services import registry
from audionet.lib.validator.client import MinerClient, Target
from audionet.lib.validator.round import Scored, score_round

HEALTH_TIMEOUT_S = 5.0
SLOW = 0.5  # an answer slower than this share of its service's timeout is a warning: a busy hour may cross it
# Each gate in words, for the verdict line ("7 of 10 answers gated: replays the reference clip").
GATE_WORDS = {
    "missing": "no decodable audio",
    "length": "the wrong length",
    "silent": "mostly silent",
    "clipped": "clipped",
    "no_speech": "no speech found",
    "duplicate": "a copy of another answer",
    "replay": "replays the reference clip",
    "no_answer": "no valid answer",
}
assert set(GATES) <= set(GATE_WORDS), "every gate the Judge knows needs its words here"


@dataclass(frozen=True)
class Finding:
    level: str  # "ok", "warn" or "FAIL"
    what: str  # "registration", "endpoint", "health" or a service's name
    line: str

    def __str__(self) -> str:
        return f"{self.level:<4} {self.what}: {self.line}"


@dataclass
class CheckSettings:
    hotkey: str
    listen: str  # "ip:port" the miner's flags publish
    answers: int = 5  # prompts per service
    timeouts: dict[str, float] = field(default_factory=dict)  # missing: the service's own timeout_s
    seed: Optional[int] = None


def ready(findings: Sequence[Finding]) -> bool:
    return not any(f.level == "FAIL" for f in findings)


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


def gate_counts(scored: Sequence[Scored]) -> str:
    """'replays the reference clip x7 (replays the reference clip); ...', most frequent first."""
    counts = Counter(s.gate_name or "" for s in scored if s.gate)
    example = {s.gate_name or "": s.gate for s in reversed(scored) if s.gate}
    return "; ".join(
        f"{GATE_WORDS.get(name, name)} x{count} ({str(example[name])[:80]})" for name, count in counts.most_common()
    )


def service_findings(title: str, scored: Sequence[Scored], timeout_s: float) -> list[Finding]:
    """The verdict on one service's answers, then their time against its timeout."""
    n, gated = len(scored), [s for s in scored if s.gate]
    kept = [s.score for s in scored if not s.gate]
    if gated:
        verdict = Finding("FAIL", title, f"{len(gated)} of {n} answers gated: {gate_counts(scored)}")
    else:
        verdict = Finding("ok", title, f"{n} of {n} answers scored, score {fmean(kept):.2f} (lowest {min(kept):.2f})")
    answered = [s.answer.latency_s for s in scored if s.answer.ok]
    if not answered:
        return [verdict, Finding("FAIL", f"{title} time", f"no answer within the {timeout_s:g} s timeout")]
    slowest = max(answered)
    level = "warn" if slowest > SLOW * timeout_s else "ok"
    line = f"{fmean(answered):.2f} s an answer, slowest {slowest:.2f} s, of a {timeout_s:g} s timeout"
    return [verdict, Finding(level, f"{title} time", line)]


async def run_check(chain, wallet, settings: CheckSettings, judge: Judge, sources: Mapping) -> list[Finding]:
    """Every finding, in order; stops early where a validator could not go on (unregistered, no health)."""
    metagraph = await chain.metagraph()
    findings, target = chain_findings(metagraph, settings.hotkey, settings.listen)
    if target is None:
        return findings
    async with httpx.AsyncClient() as http:
        client = MinerClient(wallet, http)
        served = await client.served(target, HEALTH_TIMEOUT_S)
        if served is None:
            return [*findings, Finding("FAIL", "health", f"no signed answer from {target.endpoint}/v1/health")]
        known = sorted(served & set(registry.names()))
        listed = ", ".join(known) or "nothing the validators score"
        findings.append(Finding("ok" if known else "FAIL", "health", f"signed by the miner; it serves {listed}"))
        rng = np.random.default_rng(settings.seed)
        for name in known:
            service = registry.get(name)
            timeout = settings.timeouts.get(name, service.timeout_s)
            answers = []
            for _ in range(settings.answers):  # one at a time: each answer's time is the miner's alone
                request = service.draw(rng, sources.get(name))
                answers.append(await client.query(target, service, request, timeout))
            scored = await asyncio.to_thread(score_round, answers, judge, {name: service})
            findings += service_findings(name, scored, timeout)
    return findings
