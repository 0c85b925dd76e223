"""What the attack study judges: per service, the cheap engine's answers an attacker starts from and the
honest backends' answers to the same requests (a paired comparison), drawn as the validator draws them.

* TTS: espeak (`baseline:espeak`) attacked, Kokoro honest;
* voice clone: the espeak + WORLD cloner (`baseline:world`) attacked, the Kokoro cloner honest, references
  spoken fresh by espeak and Kokoro voices in turn (the offline default);
* music: the procedural synth (`baseline:synth`) attacked; the 28 labelled neural tracks honest, each with
  a prompt from its own labels (benchmarks/common/labelled_music.py).

Music is attacked at the shortest length the validator asks for (4 s). Speech answers are attacked at 16 kHz, the rate every speech judge reads (a miner may send any rate: the
Judge's resampling is then the identity, and the gradient needs no resampler). Music is attacked at the
synth's own 22.05 kHz, which basic-pitch reads; musicnn and YAMNet get it resampled (music_measures.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.services import MUSIC, TTS, VC, registry

SPEECH_RATE = 16_000
HONEST_MUSIC = "neural tracks"
SPEECH_ENGINES = {
    TTS.name: ("baseline:espeak", "kokoro:"),
    VC.name: ("baseline:world", "kokoro-clone:"),
}  # attacked, honest


@dataclass
class Case:
    service: str
    label: str  # "espeak #2", "kokoro #2", "neural tracks #5"
    material: str  # what made it: "espeak", "kokoro", ...
    request: object
    audio: Audio
    attacked: bool  # True: an attacker starts from it; False: honest, judged as it is


def _backend(service, spec: str):
    return service.load_backend(spec)


def speech_cases(name: str, clips: int, seed: int, sources, attacked_spec: str, honest_spec: str) -> list[Case]:
    service = registry.get(name)
    cheap, honest = _backend(service, attacked_spec), _backend(service, honest_spec)
    cases = []
    for n in range(clips):
        rng = np.random.default_rng([seed, n])
        request = service.draw(rng, _engine(sources, n))
        cases.append(
            Case(
                name,
                f"{_short(attacked_spec)} #{n}",
                _short(attacked_spec),
                request,
                resample(service.generate(cheap, request), SPEECH_RATE),
                True,
            )
        )
        cases.append(
            Case(
                name,
                f"{_short(honest_spec)} #{n}",
                _short(honest_spec),
                request,
                service.generate(honest, request),
                False,
            )
        )
    return cases


def music_cases(clips: int, tracks: int, seed: int) -> list[Case]:
    from audionet.benchmarks.common.labelled_music import excerpt, labelled_tracks, prompts
    from audionet.lib.services import MusicRequest
    from audionet.lib.services.music import DRAW_SECONDS

    service = registry.get("music")
    synth = _backend(service, "baseline:synth")
    cases = []
    for n in range(clips):  # the shortest length the validator draws: the attack's cost grows with it
        request = service.draw(np.random.default_rng([seed, n]), seconds=DRAW_SECONDS[0])
        cases.append(Case("music", f"synth #{n}", "synth", request, service.generate(synth, request), True))
    for n, track in enumerate(labelled_tracks()[:tracks]):
        seconds = (4.0, 6.0, 8.0, 10.0)[n % 4]
        own, _ = prompts(track)
        request = MusicRequest(prompt=own, seconds=seconds, seed=n)
        cases.append(
            Case(
                "music",
                f"{HONEST_MUSIC} #{n}",
                HONEST_MUSIC,
                request,
                excerpt(track, 6.0 + 4.0 * (n % 3), seconds),
                False,
            )
        )
    return cases


def _engine(sources, number: int):
    """Synthesised references take the engines in turn (the adversary study's stratification)."""
    from audionet.benchmarks.adversaries.main import stratified

    return stratified(sources, number) if sources is not None else None


def _short(spec: str) -> str:
    return {
        "baseline:espeak": "espeak",
        "kokoro:": "kokoro",
        "baseline:world": "world cloner",
        "kokoro-clone:": "kokoro cloner",
    }.get(spec, spec)


def cases_for(name: str, clips: int, tracks: int, seed: int, sources=None) -> list[Case]:
    """`sources`: what the service's `draw` needs (voice clone: its references)."""
    if name in SPEECH_ENGINES:
        return speech_cases(name, clips, seed, sources, *SPEECH_ENGINES[name])
    if name == MUSIC.name:
        return music_cases(clips, tracks, seed)
    raise ValueError(f"the attack study knows tts, vc and music, not {name!r}")
