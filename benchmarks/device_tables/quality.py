"""What the validator would score, next to how long generation took.

Every clip a benchmark run generates goes through the validator's Judge
(benchmarks/common/evaluation.py). Here a run's verdicts become per-run means of the
raw reward and of the components people read (MOS, WER, speaker similarity,
pitch accuracy, text adherence, quality), and the runs become mean ± 95% CI,
as the timing tables do. A determinism check regenerates the first run with
the same seeds and compares audio and scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from audionet.benchmarks.common.timing import t_interval
from audionet.lib.core.audio import Audio, pcm16

if TYPE_CHECKING:  # judged runs only: a --no-eval run imports no scoring
    from audionet.lib.scoring.jobs import Verdict

# Each service names its own quality columns (`Service.metrics`); "reward" is the Judge's raw 0..1 score.
REWARD = ("reward", "Reward (raw, 0-1)")
DETERMINISM_TOLERANCE = 0.01  # |Δ raw reward| and |Δ component| allowed between two seeded runs
CROSS_DEVICE_TOLERANCE = 0.05  # mean reward, same backend/preset/seeds on two devices (kernels differ)
NOT_UNIT_SCALE = {"mos", "f0_rmse_hz", "f0_offset_st", "bpm"}  # their 0..1 forms (naturalness, f0_match) are compared


def run_means(verdicts: Sequence[Verdict]) -> dict[str, float]:
    """One run: the mean reward and the mean of each component over the clips that have it."""
    means = {
        "reward": float(np.mean([v.score for v in verdicts])) if verdicts else math.nan,
        "gated": float(sum(1 for v in verdicts if v.gate)),
    }
    names = {name for v in verdicts for name in v.components}
    for name in names:
        values = [v.components[name] for v in verdicts if name in v.components]
        means[name] = float(np.mean(values))
    return means


def summarise_runs(runs: Sequence[dict[str, float]]) -> dict:
    """Mean ± 95% CI (t) over runs for every measured quantity; all runs count (no outlier
    removal: a bad clip is part of the quality a validator sees)."""
    out = {}
    for name in sorted({k for run in runs for k in run}):
        values = [run[name] for run in runs if name in run and math.isfinite(run[name])]
        if values:
            out[name] = {"mean": float(np.mean(values)), "ci95": t_interval(values), "n": len(values)}
    return out


def quality_result(per_run_verdicts: Sequence[Sequence[Verdict]]) -> dict:
    runs = [run_means(verdicts) for verdicts in per_run_verdicts]
    return {
        "runs": runs,
        "summary": summarise_runs(runs),
        "clips": sum(len(v) for v in per_run_verdicts),
        "gated_clips": int(sum(run.get("gated", 0) for run in runs)),
    }


def determinism(
    first: tuple[Sequence[Audio], Sequence[Verdict]],
    again: tuple[Sequence[Audio], Sequence[Verdict]],
    tolerance: float = DETERMINISM_TOLERANCE,
) -> dict:
    """Same backend, same requests and seeds, generated twice: are audio and scores the same?
    Audio is compared as the 16-bit samples the wire carries."""
    (clips_a, verdicts_a), (clips_b, verdicts_b) = first, again
    identical = len(clips_a) == len(clips_b) and all(
        a.sample_rate == b.sample_rate and np.array_equal(pcm16(a), pcm16(b)) for a, b in zip(clips_a, clips_b)
    )
    score_gap = max((abs(a.score - b.score) for a, b in zip(verdicts_a, verdicts_b)), default=0.0)
    unit_gap = 0.0
    for a, b in zip(verdicts_a, verdicts_b):
        for name in (set(a.components) & set(b.components)) - NOT_UNIT_SCALE:
            unit_gap = max(unit_gap, abs(a.components[name] - b.components[name]))
    return {
        "audio_identical": bool(identical),
        "max_score_diff": float(score_gap),
        "max_component_diff": float(unit_gap),
        "tolerance": tolerance,
        "within_tolerance": bool(score_gap <= tolerance and unit_gap <= tolerance),
    }


def determinism_text(check: dict | None) -> str:
    if not check:
        return "not checked"
    audio = "identical audio" if check["audio_identical"] else "different audio"
    verdict = "deterministic" if check["within_tolerance"] else "NOT deterministic"
    return (
        f"{verdict}: {audio}, max |Δ reward| {check['max_score_diff']:.4f}, max |Δ component| "
        f"{check['max_component_diff']:.4f} (tolerance {check['tolerance']:g})"
    )
