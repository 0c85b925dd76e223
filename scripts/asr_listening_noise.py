"""How much a verdict strays under the Judge's listening noise (lib/scoring/listening.py), per noise level and
number of draws the WER is averaged over: each answer judged under `--seeds` seeds, its mean and std, beside its
verdict without noise, and the seconds a verdict takes. The answers are the attack study's (espeak, attacked
there) and Kokoro's (honest) to the same requests, offline profile.

    python scripts/asr_listening_noise.py --stds 0,0.003 --draws 1,2 --seeds 8 --clips 3
"""

from __future__ import annotations

import time
from statistics import fmean, pstdev


def main(argv: list[str] | None = None) -> None:
    from audionet.benchmarks.attacks.main import Judged, build_parser
    from audionet.benchmarks.attacks.materials import cases_for
    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.core.config import positive_int
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.scoring.listening import Listening
    from audionet.lib.services import TTS, registry

    parser = build_parser("asr_listening_noise")
    parser.add_argument("--stds", default="0,0.003", help="noise std, full scale = 1 (comma list)")
    parser.add_argument("--draws", default="1,2", help="noise draws the WER is averaged over (comma list)")
    parser.add_argument("--seeds", type=positive_int, default=8, help="verdict seeds per answer")
    args = parser.parse_args(["--services", "tts", *(argv or [])])
    loaded, _ = judge_from_flags(args)
    cases = cases_for("tts", args.clips, args.tracks, args.seed, registry.sources_from_flags(args, ["tts"]).get("tts"))
    for std in (float(s) for s in args.stds.split(",")):
        for draws in [1] if std == 0 else [int(k) for k in args.draws.split(",")]:
            judged = Judged(Judge(loaded.replicas, listening=Listening(std, draws)), TTS.judging)
            by_material: dict[str, list[float]] = {}
            started = time.perf_counter()
            for case in cases:
                scores = [judged.verdict(case, case.audio, seed).score for seed in range(1000, 1000 + args.seeds)]
                by_material.setdefault(case.material, []).append(pstdev(scores))
                print(
                    f"std {std:g} x{draws} {case.label}: mean {fmean(scores):.3f}, std over {args.seeds} seeds "
                    f"{pstdev(scores):.3f}, min {min(scores):.3f}, max {max(scores):.3f}",
                    flush=True,
                )
            seconds = (time.perf_counter() - started) / (len(cases) * args.seeds)
            spread = ", ".join(f"{m} {fmean(v):.3f}" for m, v in by_material.items())
            print(f"std {std:g} x{draws}: mean std over seeds {spread}; {seconds:.2f} s a verdict", flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
