"""What faint noise buys against the loop penalty (the `repetition` measure, lib/scoring/analyses.py): the
procedural synth's answers to the validator's music prompts that read above the penalty's start (0.8), each
judged clean, with the measure as it was before silent frame pairs were left out (counted as frames that do not
recur), and attacked: sign noise at the L-inf bound (about -50 dBFS at 0.003), the best of `draws` by the real
Judge, as an attacker who knows the measure would keep.

    python scripts/loop_penalty_noise.py 150 4 0.003     # prompts, draws, bound
"""

from __future__ import annotations

import sys


def old_repetition(audio, lags_s=(0.5, 4.0), alike=0.98) -> float:
    """The measure before stop 57: silent frames in the denominator."""
    import numpy as np

    from audionet.lib.scoring.duplicates import FRAME_S, fingerprint

    prints, best = fingerprint(audio), 0.0
    low, high = (int(s / FRAME_S) for s in lags_s)
    for lag in range(low, min(high, len(prints) // 2) + 1):
        a, b = prints[:-lag], prints[lag:]
        a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
        cosine = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1) + 1e-9)
        best = max(best, float(np.mean(cosine > alike)))
    return best


def main(prompts: int, draws: int, bound: float) -> None:
    import numpy as np

    from audionet.lib.core.audio import Audio
    from audionet.lib.prompts.music import make_music_request_text
    from audionet.lib.scoring.analyses import repetition
    from audionet.lib.scoring.judge import Judge
    from audionet.lib.services import MUSIC, MusicRequest
    from audionet.models.baselines.synth import ProceduralMusicGenerator

    rng, synth, judge = np.random.default_rng(1), ProceduralMusicGenerator(), Judge.load(devices="cpu")
    rows = []
    for i in range(prompts):
        prompt, seconds = make_music_request_text(rng), float(rng.choice([5.0, 8.0, 10.0]))
        clean = synth.generate(prompt.text, seconds, seed=i)
        if repetition(clean) <= 0.8:
            continue
        request = MusicRequest(prompt=prompt.text, seconds=seconds, seed=i)
        (verdict,) = judge.score(MUSIC.judging, [MUSIC.job(request, clean, "clean")], remember=False)
        before = MUSIC.judging.breakdown({**verdict.measures, "repetition": old_repetition(clean)}).score
        best = verdict.score
        for _ in range(draws):
            noisy = np.clip(clean.samples + bound * np.sign(rng.standard_normal(len(clean.samples))), -1.0, 1.0)
            (attacked,) = judge.score(
                MUSIC.judging,
                [MUSIC.job(request, Audio(noisy.astype(np.float32), clean.sample_rate), "a")],
                remember=False,
            )
            best = max(best, attacked.score)
        rows.append((verdict.score, before, best))
        print(f"#{i}: clean {verdict.score:.3f}, with the measure before {before:.3f}, attacked {best:.3f}", flush=True)
    clean, before, attacked = (np.array(column) for column in zip(*rows))
    print(
        f"{len(rows)} of {prompts} synth answers above 0.8: clean {clean.mean():.3f}, the measure before "
        f"{before.mean():.3f}, attacked {attacked.mean():.3f} (gain {np.mean(attacked - clean):+.3f}, at most "
        f"{np.max(attacked - clean):+.3f}; above the measure before: {np.mean(attacked - before):+.3f})"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]), float(sys.argv[3]))
