"""The self-check's verdict on one service: would a validator pay for these answers?

A service's answers are judged as one round (gates, duplicates, evaluators), and the mean score is held against
what the subnet's curve pays (`incentive.CURVE`): relative quality is the score over the reference's (the
reference backend's answers to the same prompts, judged in the same run), nothing is paid at or under the
curve's floor, and above it the pay rises with the distance from the floor. The verdict:

- `FAIL`: earns nothing: an answer gated, refused or too late, or a score at or under the floor;
- `warn`: earns little: the curve pays it less than LITTLE of what it pays the reference;
- `ok`: would earn.

Beside it, the parts and penalties of the scores in words (lib/scoring/explain.py) and the answers' time
against the timeout. The check is an estimate: a validator judges by a lower confidence bound over many answers
and against the best miners it sees, not against the shipped reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Optional

from audionet.lib.scoring.explain import in_words
from audionet.lib.scoring.judge import GATES
from audionet.lib.validator.incentive import CURVE
from audionet.lib.validator.round import Scored

SLOW = 0.5  # an answer slower than this share of its service's timeout is a warning: a busy hour may cross it
LITTLE = 0.5  # below this share of the reference's pay, a service "earns little" (warn)
WEAK = 0.05  # a reference scoring under this (e.g. the offline evaluators' ASR on Kokoro) measures little
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
    what: str  # "registration", "endpoint", "health" or a service's line ("tts", "tts why", "tts time")
    line: str
    service: Optional[str] = None  # the service this finding is about (None: the miner as a whole)

    def __str__(self) -> str:
        return f"{self.level:<4} {self.what}: {self.line}"


@dataclass(frozen=True)
class Reference:
    """What the curve's reference is for the check: `score`, the mean of `spec`'s answers to the same prompts
    (None where it could not be had: `problem` says why)."""

    spec: str
    score: Optional[float]
    problem: str = ""


def ready(findings: Sequence[Finding]) -> bool:
    """Nothing about the miner as a whole failed, and at least one service would earn (no FAIL of its own)."""
    services = list(dict.fromkeys(f.service for f in findings if f.service))
    return not failed(None, findings) and bool(earning(services, findings))


def earning(services: Sequence[str], findings: Sequence[Finding]) -> list[str]:
    """The services among `services` that would earn."""
    return [s for s in services if any(f.service == s for f in findings) and not failed(s, findings)]


def failed(service: Optional[str], findings: Sequence[Finding]) -> bool:
    """A FAIL about `service` (None: about the miner as a whole)."""
    return any(f.level == "FAIL" for f in findings if f.service == service)


def gate_key(item: Scored) -> str:
    """A gate in words; a failed query says what it was: a refusal with its HTTP status, or no answer in time."""
    if item.gate_name != "no_answer":
        return GATE_WORDS.get(item.gate_name or "", item.gate_name or "")
    error = item.answer.error or ""
    if error.startswith("HTTP "):
        return f"refused with {error.split(':')[0]}"
    if error.startswith("timed out"):
        return "no answer within the timeout"
    return GATE_WORDS["no_answer"]


def gate_counts(scored: Sequence[Scored]) -> str:
    """'replays the reference clip x7 (replays the reference clip); ...', most frequent first, each with its
    last reason whole (a refusal's reason as the miner sent it)."""
    gated = [s for s in scored if s.gate]
    counts = Counter(gate_key(s) for s in gated)
    example = {gate_key(s): (s.answer.error if s.gate_name == "no_answer" else s.gate) for s in reversed(gated)}
    return "; ".join(f"{key} x{count} ({example[key]})" for key, count in counts.most_common())


def pay(score: float, reference: Reference) -> tuple[str, str]:
    """(level, words): what the curve pays answers scoring `score` where the reference scores what it does."""
    if reference.score is None or reference.score <= 0:
        why = reference.problem or "its answers scored 0"
        return "warn", f"no reference to measure against ({reference.spec}: {why})"
    relative = score / reference.score
    share = float(CURVE.shape(relative))
    against = f"{relative:.0%} of the reference's {reference.score:.2f} ({reference.spec}, same prompts)"
    if reference.score < WEAK:
        against += f" (a weak measure: the reference itself scores under {WEAK:g} with these evaluators)"
    if relative <= CURVE.floor:
        return "FAIL", f"{against}, at or under the curve's floor of {CURVE.floor:.0%}: it earns nothing"
    if share < LITTLE:
        return "warn", f"{against}: the curve pays it {share:.0%} of the reference's pay, it earns little"
    return "ok", f"{against}: the curve pays it {share:.0%} of the reference's pay"


def service_findings(
    service: str, scored: Sequence[Scored], timeout_s: float, judging, reference: Reference
) -> list[Finding]:
    """The verdict on one service's answers, their parts and penalties in words, then their time."""
    n, gated = len(scored), [s for s in scored if s.gate]
    kept = [s.score for s in scored if not s.gate]
    if gated:
        verdict = Finding(
            "FAIL", service, f"{len(gated)} of {n} answers gated, it earns nothing: {gate_counts(scored)}", service
        )
    else:
        score = fmean(kept)
        level, words = pay(score, reference)
        verdict = Finding(
            level,
            service,
            f"{n} of {n} answers scored, score {score:.2f} (lowest {min(kept):.2f}), {words}",
            service,
        )
    found = [verdict]
    why = in_words(judging, [s.components for s in scored if not s.gate])
    if why:
        found.append(Finding(verdict.level, f"{service} why", why, service))
    return [*found, time_finding(service, scored, timeout_s)]


def time_finding(service: str, scored: Sequence[Scored], timeout_s: float) -> Finding:
    """The answers' time against the timeout; where none arrived, why: refused, or not within the timeout."""
    what = f"{service} time"
    answered = [s.answer.latency_s for s in scored if s.answer.ok]
    if not answered:
        kinds = Counter(gate_key(s) for s in scored)
        if "no answer within the timeout" in kinds:
            return Finding("FAIL", what, f"no answer within the {timeout_s:g} s timeout", service)
        return Finding("FAIL", what, "no answer: " + ", ".join(f"{k} x{c}" for k, c in kinds.most_common()), service)
    slowest = max(answered)
    level = "warn" if slowest > SLOW * timeout_s else "ok"
    line = f"{fmean(answered):.2f} s an answer, slowest {slowest:.2f} s, of a {timeout_s:g} s timeout"
    return Finding(level, what, line, service)
