"""The music half of the judges study: the labelled neural tracks (benchmarks/common/labelled_music.py) cut
to 4-10 s, each judged as a music answer to a prompt built from its own labels and to one from
contradicting labels; the procedural synth on the same own prompts; and every music attack of the
adversary catalogue built from the neural track (the hardest raw material a cheat could have)."""

from __future__ import annotations

import numpy as np

from audionet.benchmarks.adversaries.attacks import Kit, for_service
from audionet.benchmarks.common.labelled_music import excerpt, labelled_tracks, prompts
from audionet.benchmarks.common.owning import SCORES, owned_scores
from audionet.lib.services import MUSIC, MusicRequest

LENGTHS = (4.0, 6.0, 8.0, 10.0)
NEURAL, SYNTH = "neural tracks", "procedural synth"


def kit(rng: np.random.Generator) -> Kit:
    from audionet.models.baselines.espeak import EspeakSynthesizer
    from audionet.models.baselines.synth import ProceduralMusicGenerator
    from audionet.models.baselines.world_vc import WorldVoiceCloner
    from audionet.models.kokoro.tts import KokoroSynthesizer

    return Kit(rng, KokoroSynthesizer(""), EspeakSynthesizer(), ProceduralMusicGenerator(), WorldVoiceCloner())


def run(judge, tracks: int, seed: int, tick) -> tuple[dict, list[dict]]:
    """(per class, per track: the score with the own prompt; per track: the neural clip's score with its own
    prompt and with the contradicting one). Each answer is judged alone: versions of one clip in one round
    would be copies of each other."""
    rng = np.random.default_rng(seed)
    tools = kit(rng)
    attacks = for_service(MUSIC.name)
    every = labelled_tracks()
    chosen = every[:tracks]
    rows = {name: [] for name in (NEURAL, SYNTH, *(a.name for a in attacks))}
    pairs = []
    for i, track in enumerate(chosen):
        seconds, start = LENGTHS[i % len(LENGTHS)], 6.0 + 4.0 * (i % 3)
        own_prompt, other_prompt = prompts(track)
        own = MusicRequest(prompt=own_prompt, seconds=seconds, seed=i)
        other = MusicRequest(prompt=other_prompt, seconds=seconds, seed=i)
        clip = excerpt(track, start, seconds)
        previous = excerpt(every[i - 1], start, seconds)  # a copier's raw material: an earlier round's answer
        judge.duplicates.forget()
        judge.score(MUSIC.judging, [MUSIC.job(own, previous, "the previous round")])  # in the history, as on a network
        answers = {NEURAL: clip, SYNTH: tools.synth.generate(own_prompt, seconds, seed=i)}
        answers.update({a.name: a.make(tools, own, clip, previous) for a in attacks})
        for name, audio in answers.items():
            (verdict,) = judge.score(MUSIC.judging, [MUSIC.job(own, audio, name)], remember=False)
            rows[name].append(
                {"track": track.name, "score": verdict.score, "gate": verdict.gate, **verdict.parts}
                | owned_scores(MUSIC.judging, verdict.measures, bool(verdict.gate))
            )
        (mine,) = judge.score(MUSIC.judging, [MUSIC.job(own, clip, "own")], remember=False)
        (theirs,) = judge.score(MUSIC.judging, [MUSIC.job(other, clip, "other")], remember=False)
        pairs.append(
            {
                "track": track.name,
                "own": own_prompt,
                "other": other_prompt,
                "own_score": mine.score,
                "other_score": theirs.score,
            }
        )
        tick()
    return rows, pairs


def owning_the_learned_judges(rows: dict) -> dict:
    """Per honest class: the mean score with the learned judges at half their range and at their top, with and
    without the ceilings; for the neural tracks, the share of the uncapped top each keeps under the ceilings."""
    found = {}
    for name in (NEURAL, SYNTH):
        found[name] = {key: float(np.mean([r[key] for r in rows[name]])) for key in SCORES}
    kept = [r["owned"] / r["owned_uncapped"] for r in rows[NEURAL] if r["owned_uncapped"] > 0]
    found["neural_kept_at_top"] = {"mean": float(np.mean(kept)), "least": float(np.min(kept))}
    found["synth_gain_capped"] = found[SYNTH]["owned"] - found[SYNTH]["learned_middle"]
    found["synth_gain_uncapped"] = found[SYNTH]["owned_uncapped"] - found[SYNTH]["learned_middle"]
    return found


def findings(rows: dict, pairs: list[dict]) -> dict:
    mean = {name: float(np.mean([r["score"] for r in class_rows])) for name, class_rows in rows.items()}
    floor = min(mean[NEURAL], mean[SYNTH])
    return {
        "mean_score": mean,
        "learned_owned": owning_the_learned_judges(rows),
        "neural_minus_synth": mean[NEURAL] - mean[SYNTH],
        "cheats_at_or_above_honest": [n for n, m in mean.items() if n not in (NEURAL, SYNTH) and m >= floor],
        "own_prompt_wins": sum(p["own_score"] > p["other_score"] for p in pairs),
        "pairs": len(pairs),
    }
