"""What the music Judge's defence (the `music_floor` analysis: models/eval/music_floor.py) costs: the music Judge
with it and without it (the study's undefended declaration), side by side in one run, interleaved, on the attack
study's clips (3 procedural synth answers and the first labelled neural tracks), median of `rounds` runs each.

    python scripts/music_floor_cost.py 4 8     # rounds, neural tracks
"""

from __future__ import annotations

import statistics
import sys
import time


def main(rounds: int, tracks: int) -> None:
    from audionet.benchmarks.attacks.main import build_parser, judges_for, undefended
    from audionet.benchmarks.attacks.materials import cases_for
    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.services import registry

    args = build_parser("music_floor_cost").parse_args(["--services", "music"])
    defended, _ = judge_from_flags(args)
    judges = judges_for("music", defended, undefended(defended))
    cases = cases_for("music", 3, tracks, 0)
    service = registry.get("music")
    seconds: dict[str, list[float]] = {which: [] for which in judges}
    for n in range(rounds + 1):  # the first round warms the evaluators up and is not counted
        for which, judged in judges.items():
            jobs = [service.job(case.request, case.audio, case.label) for case in cases]
            started = time.perf_counter()
            judged.judge.score(judged.judging, jobs, remember=False)
            if n:
                seconds[which].append(time.perf_counter() - started)
    median = {which: statistics.median(values) for which, values in seconds.items()}
    audio_s = sum(case.audio.seconds for case in cases)
    for which, value in median.items():
        print(f"{which}: {value:.2f} s for {len(cases)} answers ({audio_s:.0f} s of audio), runs {seconds[which]}")
    print(f"defended / undefended: {median['defended'] / median['undefended']:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4, int(sys.argv[2]) if len(sys.argv) > 2 else 8)
