"""Projected gradient ascent on a waveform under an L-infinity bound, plain (PGD) or with expectation over
random transformations (EOT-PGD), as a miner with the validator's code and weights would run it.

The perturbation is found at the clip's own rate and sent as 16-bit PCM (the wire's FLAC): every step
rounds to that grid with a straight-through gradient, so what is optimised is what arrives. Signed steps
of `bound / 4` fall linearly to `bound / 40`. Every `check_every` steps (and at the end) the current
answer goes through the real Judge (`check`), which holds what no gradient reaches (Whisper's words, the
VAD and the other gates): the attack keeps the answer the real Judge scored highest, as a miner checking
its answer locally before sending it would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from audionet.benchmarks.attacks.onnx_torch import straight_through
from audionet.lib.core.audio import PCM16_SCALE

Objective = Callable[..., object]  # (torch samples, torch.Generator or None) -> torch scalar to maximise


@dataclass(frozen=True)
class Settings:
    bound: float  # L-infinity, in full-scale units (1.0 = the largest sample)
    steps: int
    eot: int = 0  # transformations drawn per step (0: plain PGD on the deterministic Judge)
    check_every: int = 25
    seed: int = 0  # the attacker's own randomness, never the validator's


@dataclass
class Outcome:
    samples: np.ndarray  # the best answer the real Judge saw (float32, on the 16-bit grid)
    score: float  # the real Judge's score of it
    trace: list[tuple[int, Optional[float], float]] = field(default_factory=list)  # (step, objective, real score)
    steps_run: int = 0


def on_grid(samples: np.ndarray) -> np.ndarray:
    return (np.round(np.clip(samples, -1.0, 1.0) * PCM16_SCALE) / PCM16_SCALE).astype(np.float32)


def attack(
    objective: Objective,
    clean: np.ndarray,
    settings: Settings,
    check: Callable[[np.ndarray], float],
    *,
    clean_score: Optional[float] = None,
    ceiling: float = 1.0,
    progress: Callable[[int, float, float], None] = lambda step, value, score: None,
) -> Outcome:
    """Maximise `objective(samples, generator)` over clean + delta, |delta| <= bound. `check(samples)` is the real
    Judge's score; the attack stops early once it reaches `ceiling`, the most the measures it can move could
    give (surrogate.best_possible): nothing more to gain."""
    import torch

    generator = torch.Generator().manual_seed(settings.seed)
    x = torch.from_numpy(clean.astype(np.float32))
    delta = torch.zeros_like(x)
    best = Outcome(on_grid(clean), clean_score if clean_score is not None else check(on_grid(clean)))
    for step in range(1, settings.steps + 1):
        delta.requires_grad_(True)
        answer = quantised(x + delta)
        if settings.eot:
            value = sum(objective(answer, generator) for _ in range(settings.eot)) / settings.eot
        else:
            value = objective(answer, None)
        (gradient,) = torch.autograd.grad(value, delta)
        size = settings.bound * (0.25 - 0.225 * (step - 1) / max(1, settings.steps - 1))
        with torch.no_grad():
            delta = (delta + size * gradient.sign()).clamp(-settings.bound, settings.bound)
            delta = (x + delta).clamp(-1.0, 1.0) - x
        best.steps_run = step
        if step % settings.check_every == 0 or step == settings.steps:
            samples = on_grid((x + delta).numpy())
            score = check(samples)
            best.trace.append((step, float(value.detach()), score))
            progress(step, float(value.detach()), score)
            if score > best.score:
                best.samples, best.score = samples, score
            if best.score >= ceiling - 1e-6:
                break
    return best


def random_search(
    clean: np.ndarray, bound: float, draws: int, check: Callable[[np.ndarray], float], clean_score: float, seed: int = 0
) -> Outcome:
    """No gradient at all: `draws` random sign perturbations at the full bound, each sent through the real Judge,
    the best kept. It buys what the measures without a gradient (Whisper's words) give by chance: a Judge whose
    verdict swings under any faint change pays the attacker the best of the draws."""
    rng = np.random.default_rng(seed)
    best = Outcome(on_grid(clean), clean_score)
    for draw in range(1, draws + 1):
        samples = on_grid(clean + bound * rng.choice(np.array([-1.0, 1.0], np.float32), size=clean.shape))
        score = check(samples)
        best.trace.append((draw, None, score))  # no objective: no surrogate is climbed
        best.steps_run = draw
        if score > best.score:
            best.samples, best.score = samples, score
    return best


def quantised(samples):
    """16-bit PCM rounding with a straight-through gradient."""
    return straight_through(samples, torch_round(samples))


def torch_round(samples):
    import torch

    return torch.round(samples.clamp(-1.0, 1.0) * PCM16_SCALE) / PCM16_SCALE


def snr_db(clean: np.ndarray, attacked: np.ndarray) -> float:
    """The clean clip's power over the perturbation's, in dB (infinite for no perturbation)."""
    noise = float(np.mean((attacked.astype(np.float64) - clean) ** 2))
    return float("inf") if noise == 0 else 10.0 * np.log10(float(np.mean(clean.astype(np.float64) ** 2)) / noise)
