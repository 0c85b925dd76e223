"""The requests a benchmark run sends, sized to the mode's audio length.

Every request stays inside the wire protocol's limits, so the numbers are for
requests a validator could really send. Each service sizes its own requests
(`Service.workload`): a target longer than one request allows becomes equal
segments that one run generates back to back, and the run's audio duration is
the sum. Speech text length follows the backend's own speaking rate
(`Service.calibrate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODES = {"quick": 5.0, "balanced": 30.0, "full": 60.0}  # seconds of audio per run (seed 000)


@dataclass(frozen=True)
class Workload:
    service: str
    target_seconds: float
    requests: tuple  # one run = these requests, in order


def make_workloads(service, backend, target_seconds: float, seed: int, count: int, sources=None) -> list[Workload]:
    """One workload per measured run: fresh prompts (and fresh references, drawn the way the
    validator draws them) from the run's own rng, so quality varies over runs as over rounds."""
    calibration = service.calibrate(backend)
    rngs = [np.random.default_rng([seed, run]) for run in range(max(1, count))]
    return [
        Workload(service.name, target_seconds, tuple(service.workload(rng, sources, target_seconds, calibration)))
        for rng in rngs
    ]
