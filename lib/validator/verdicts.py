"""A round's verdicts in public: one row per answer (who, which service, score and every component, the gate
that fired and why, the score in words as the self-check and localnet.html give it (`why`), latency against the timeout, model and device as the miner signed them, the record's
estimate, the weight in the service and in the mechanism that pays it, and the seed of the ASR's listening noise
that `audionet-score --seed` reproduces the verdict with).

Every row goes to the validator's local rounds.jsonl; W&B gets one table per service and round
(`tables/verdicts/<service>`: the columns below, then that service's components, every penalty it declares
among them as `<name>_penalty` even where no clip of the round measured it), at most `max_rows` rows a
round, and the audio only when `--neuron.wandb_audio` asks for it. docs/validator.md says how a miner finds
its rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from audionet.lib.core.config import Settings, positive_int, setting
from audionet.lib.scoring.explain import PENALTY, in_words, penalty_names
from audionet.lib.services import registry

if TYPE_CHECKING:  # the flags are read before the scoring stack loads
    from audionet.lib.validator.mechanisms import Plan
    from audionet.lib.validator.round import Scored

# The fixed columns of every verdict table, in order; each service's components follow them.
COLUMNS = (
    "round",
    "uid",
    "hotkey",
    "service",
    "score",
    "reward",
    "gate_name",
    "gate",
    "why",
    "latency_s",
    "timeout_s",
    "audio_s",
    "model",
    "device",
    "estimate",
    "weight",
    "mechanism",
    "mechanism_weight",
    "seed",
)


def verdict_rows(
    round_: int,
    scored: Sequence[Scored],
    estimates: Sequence[float],
    timeouts: Mapping[str, float],
    weights: Mapping[str, Sequence[float]],
    plan: Optional[Plan] = None,
) -> list[dict]:
    """One row per answer; `weights`: per service and uid, as the records stand after this round; `plan`: the
    mechanisms as the validator last set weights (None before it has: the mechanism columns stay empty)."""
    arrays = {s: np.asarray(w, float) for s, w in weights.items()}
    paid = {m: plan.combine(arrays, m) for m in plan.used} if plan else {}
    rows = []
    for item, estimate in zip(scored, estimates):
        answer, uid = item.answer, item.answer.target.uid
        mechanism = plan.mechanism.get(answer.service) if plan else None
        in_mechanism = paid.get(mechanism, np.zeros(0))
        service_weights = arrays.get(answer.service, np.zeros(0))
        rows.append(
            {
                "round": round_,
                "uid": uid,
                "hotkey": answer.target.hotkey,
                "service": answer.service,
                "score": item.score,
                "reward": item.reward,
                "gate_name": item.gate_name,  # which gate fired (None: none did)
                "gate": item.gate,  # why, in one line (rounds.jsonl has always carried it)
                # an answer past every gate: its parts and the penalties that took from it, in words
                "why": None if item.gate else in_words(registry.get(answer.service).judging, [item.components]),
                "latency_s": round(answer.latency_s, 4),
                "timeout_s": timeouts.get(answer.service),
                "audio_s": round(answer.audio.seconds, 3) if answer.audio is not None else None,
                "model": answer.meta.model if answer.meta else None,
                "device": answer.meta.device if answer.meta else None,
                "estimate": estimate,
                "weight": float(service_weights[uid]) if uid < len(service_weights) else None,
                "mechanism": mechanism,
                "mechanism_weight": float(in_mechanism[uid]) if uid < len(in_mechanism) else None,
                "seed": item.seed,  # the listening noise's: `audionet-score --seed` reproduces the verdict
                "components": item.components,
            }
        )
    return rows


def tables(rows: Sequence[dict], max_rows: int, audio: bool = False) -> dict[str, tuple[list[str], list[dict]]]:
    """The W&B tables of one round: `verdicts/<service>` -> (columns, rows), the rows flattened (components as
    columns) and cut to `max_rows` in all; with `audio`, an `audio` column names each row's clip (its W&B key)."""
    kept = list(rows)[:max_rows]
    out: dict[str, tuple[list[str], list[dict]]] = {}
    for service in dict.fromkeys(row["service"] for row in kept):
        mine = [row for row in kept if row["service"] == service]
        declared = [name + PENALTY for name in penalty_names(registry.get(service).judging)]
        components = sorted({name for row in mine for name in row["components"]}.union(declared))
        columns = [*COLUMNS, *components, *(["audio"] if audio else [])]
        flat = [{**row, **row["components"], **({"audio": audio_key(row)} if audio else {})} for row in mine]
        out[f"verdicts/{service}"] = (columns, flat)
    return out


def audio_key(row: dict) -> str:
    return f"verdicts/audio/{row['service']}/uid{row['uid']}"


@dataclass
class VerdictLog(Settings):
    """The validator's hook (`Validator.on_verdicts`): each round's rows to W&B through its telemetry, and with
    `audio` each kept row's clip at `verdicts/audio/<service>/uid<uid>` (W&B keeps no audio inside a table). Its
    settings are flags (`VerdictLog.add_flags`; `VerdictLog.from_flags(args, telemetry=...)`)."""

    telemetry: object  # lib.core.telemetry.Telemetry
    # a sample of 16 miners x 3 services is 48 rows
    max_rows: int = setting("neuron.verdict_rows", 256, type=positive_int, help="verdict rows per round on W&B")
    audio: bool = setting(
        "neuron.wandb_audio", False, action="store_true", help="upload each answer's audio with its W&B row"
    )

    def __call__(self, rows: Sequence[dict], scored: Sequence[Scored]) -> None:
        values: dict = {
            "verdicts/rows": min(len(rows), self.max_rows),
            "verdicts/dropped": max(0, len(rows) - self.max_rows),
        }
        if self.audio:
            clips = zip(rows[: self.max_rows], scored)
            values.update({audio_key(row): item.answer.audio for row, item in clips if item.answer.audio is not None})
        self.telemetry.log_tables(tables(rows, self.max_rows, self.audio), values)  # type: ignore[attr-defined]
