"""A prototype of a defence, measured, not deployed: the validator hears the ASR's input through noise of its
own, a fresh draw per verdict that the miner cannot know (issue 46). The defended Judge's remaining gain at
L-inf 0.003 is Whisper's: espeak + any faint noise is transcribed differently (often better) than espeak, so
an attacker without a gradient keeps the best of a few sign-noise draws. Here the attacker picks among 8 draws
by the mean of 2 of its own draws of the validator's noise (EOT selection, knowing the noise's level); the
validator then judges the pick with 4 fresh draws. Kokoro's clean answers are judged the same way.

    python scripts/asr_listening_noise.py 0 0.003 0.006     # noise std of the ASR's input, full scale = 1

It replaces the Judge's ASR call for the run (the deployed Judge hears no noise).
"""

from __future__ import annotations

import sys

import numpy as np


def main(sigmas: list[float]) -> None:
    from audionet.benchmarks.attacks.main import build_parser, judges_for, undefended
    from audionet.benchmarks.attacks.materials import cases_for
    from audionet.benchmarks.attacks.pgd import on_grid
    from audionet.benchmarks.common.evaluation import judge_from_flags
    from audionet.lib.core.audio import Audio
    from audionet.lib.services import registry

    args = build_parser("asr_listening_noise").parse_args(["--services", "tts"])
    defended, _ = judge_from_flags(args)
    judged = judges_for("tts", defended, undefended(defended))["defended"]
    cases = cases_for("tts", 3, 4, 0, registry.sources_from_flags(args, ["tts"]).get("tts"))
    asr = defended.evaluators.asr
    plain = asr.transcribe
    state = {"sigma": 0.0, "rng": np.random.default_rng(1)}

    def noisy(clips):
        if not state["sigma"]:
            return plain(clips)
        draw = [state["rng"].normal(0, state["sigma"], c.samples.shape) for c in clips]
        return plain([Audio((c.samples + d).astype(np.float32), c.sample_rate) for c, d in zip(clips, draw)])

    asr.transcribe = noisy

    def judged_mean(case, samples, draws: int, seed: int) -> float:
        state["rng"] = np.random.default_rng(seed)
        return float(
            np.mean([judged.verdict(case, Audio(samples, case.audio.sample_rate)).score for _ in range(draws)])
        )

    for sigma in sigmas:
        state["sigma"] = sigma
        for case in cases:
            line = f"sigma {sigma} {case.label}: clean {judged_mean(case, case.audio.samples, 4, 100):.3f}"
            if case.attacked:
                rng = np.random.default_rng(7)
                shape = case.audio.samples.shape
                candidates = [on_grid(case.audio.samples + 0.003 * rng.choice([-1, 1], size=shape)) for _ in range(8)]
                own = [judged_mean(case, x, 2, 200 + n) for n, x in enumerate(candidates)]
                pick = candidates[int(np.argmax(own))]
                line += f" attacker's view of its best {max(own):.3f}; validator {judged_mean(case, pick, 4, 300):.3f}"
            print(line, flush=True)


if __name__ == "__main__":
    main([float(a) for a in sys.argv[1:]] or [0.0, 0.003])
