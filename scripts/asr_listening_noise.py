"""How much a verdict strays under the Judge's listening noise (lib/scoring/listening.py), per noise level and
number of draws the WER is averaged over: each answer judged under `--seeds` seeds, its mean and std, beside its
verdict without noise. The answers are the attack study's (espeak, attacked there) and Kokoro's (honest) to the
same requests, offline profile. Then the cost: every answer judged as one round under each setting in turn, the
median of `--timing-runs` interleaved runs (side by side on one machine: a ratio, not an absolute time).

    python scripts/asr_listening_noise.py --stds 0,0.003 --draws 1,2 --seeds 8 --clips 3
"""

from __future__ import annotations

import time
from statistics import fmean, median, pstdev


def main(argv: list[str] | None = None) -> None:
    from audionet.benchmarks.attacks.main import Judged, build_parser
    from audionet.benchmarks.attacks.materials import cases_for
    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.scoring.listening import Listening
    from audionet.lib.services import TTS, registry

    parser = build_parser("asr_listening_noise")
    parser.add_argument("--stds", default="0,0.003", help="noise std, full scale = 1 (comma list)")
    parser.add_argument("--draws", default="1,2", help="noise draws the WER is averaged over (comma list)")
    parser.add_argument("--seeds", type=int, default=8, help="verdict seeds per answer (0: the cost alone)")
    parser.add_argument("--timing-runs", type=int, default=4, help="interleaved timing runs (0: none)")
    args = parser.parse_args(["--services", "tts", *(argv or [])])
    loaded, _ = judge_from_flags(args)
    cases = cases_for("tts", args.clips, args.tracks, args.seed, registry.sources_from_flags(args, ["tts"]).get("tts"))
    settings = [
        Listening(float(std), draws)
        for std in args.stds.split(",")
        for draws in ([1] if float(std) == 0 else [int(k) for k in args.draws.split(",")])
    ]
    judges = {setting: Judge(loaded.replicas, listening=setting) for setting in settings}
    for setting, judge in judges.items() if args.seeds else ():
        judged = Judged(judge, TTS.judging)
        by_material: dict[str, list[float]] = {}
        for case in cases:
            scores = [judged.verdict(case, case.audio, seed).score for seed in range(1000, 1000 + args.seeds)]
            by_material.setdefault(case.material, []).append(pstdev(scores))
            print(
                f"std {setting.std:g} x{setting.draws} {case.label}: mean {fmean(scores):.3f}, std over {args.seeds} "
                f"seeds {pstdev(scores):.3f}, min {min(scores):.3f}, max {max(scores):.3f}",
                flush=True,
            )
        spread = ", ".join(f"{m} {fmean(v):.3f}" for m, v in by_material.items())
        print(f"std {setting.std:g} x{setting.draws}: mean std over seeds {spread}", flush=True)
    jobs = [TTS.job(case.request, case.audio, case.label) for case in cases]
    seconds: dict[Listening, list[float]] = {setting: [] for setting in settings}
    for run in range(args.timing_runs):
        for setting, judge in judges.items():
            started = time.perf_counter()
            judge.score(TTS.judging, jobs, remember=False)
            seconds[setting].append(time.perf_counter() - started)
        print(f"timing run {run + 1}/{args.timing_runs}", flush=True)
    if args.timing_runs:
        base = median(seconds[settings[0]])
        for setting in settings:
            took = median(seconds[setting])
            print(f"std {setting.std:g} x{setting.draws}: {took:.2f} s a round of {len(jobs)} ({took / base:.2f}x)")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
