"""A catalogue of cheap and gaming miners: each attack answers a request the way a miner with
money at stake and no good model might, from the honest answer to its own prompt (what a miner
could generate cheaply or once), another miner's answer, or signal tricks.

Used by benchmarks/adversaries/main.py (the table) and tests/benchmarks/test_adversaries.py.
An attack is `make(kit, request, own, other) -> Audio`:
    own    the honest backend's answer to the request (raw material a cheap miner could get)
    other  the honest miner's answer from the previous round (what a copier can get hold of:
           a miner never sees another miner's answer to the current round)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio, pcm16, resample
from audionet.models.baselines.looped import one_second_looped


# Which services an attack fits, from what the service is (its gates and inputs), not from its name: a
# new service gets every attack its kind of answer allows.
def every(service) -> bool:
    return True


def speech(service) -> bool:
    """Its answers are speech (the Judge gates answers without it)."""
    return "no_speech" in service.judging.gates


def cloning(service) -> bool:
    """Its requests carry a reference voice."""
    return "reference" in service.inputs


def plain_speech(service) -> bool:
    return speech(service) and not cloning(service)


def music(service) -> bool:
    return "seconds" in service.inputs and not speech(service)


@dataclass
class Kit:
    """What attacks may use: an rng and cheap generators (loaded once)."""

    rng: np.random.Generator
    speech: object  # SpeechSynthesizer: Kokoro, the best offline TTS (speech-as-music, ignored reference)
    espeak: object  # SpeechSynthesizer: the cheapest engine
    synth: object  # MusicGenerator: procedural music (music-as-speech)
    world: object  # VoiceCloner: the espeak-based WORLD cloner


@dataclass(frozen=True)
class Attack:
    name: str
    fits: Callable[[object], bool]  # which services (lib.services Service) it answers
    what: str
    make: Callable[[Kit, object, Audio, Audio], Audio]
    blind_spot: tuple[str, ...] = ()  # profiles documented as unable to tell this attack from honest work
    cheap_engine: bool = False  # an honest but cheap engine, not a cheat (the incentive study's cheap class)


def _fit(samples: np.ndarray, rate: int, seconds: float) -> Audio:
    """Loop or cut to exactly `seconds`."""
    n = max(1, int(seconds * rate))
    reps = int(np.ceil(n / max(1, len(samples))))
    return Audio(np.tile(samples, reps)[:n], rate)


def noise(kit, request, own, other) -> Audio:
    return Audio(0.1 * kit.rng.standard_normal(len(own.samples)), own.sample_rate)


def silence_padding(kit, request, own, other) -> Audio:
    """The first 30% of an answer, then silence to a plausible length (cheap and short)."""
    keep = own.samples[: int(0.3 * len(own.samples))]
    return Audio(np.concatenate([keep, np.zeros(len(own.samples) - len(keep), np.float32)]), own.sample_rate)


def loop_one_second(kit, request, own, other) -> Audio:
    return one_second_looped(own)


def loop_with_hiss(kit, request, own, other) -> Audio:
    """The 1 s loop with fresh hiss at -40 dBFS: sounding pauses that never recur dilute the loop measure (one
    loop of the synth in two escapes its penalty this way)."""
    looped = one_second_looped(own)
    return Audio(looped.samples + 0.01 * kit.rng.standard_normal(len(looped.samples)), looped.sample_rate)


def time_compressed(kit, request, own, other) -> Audio:
    """Speech played 1.6x faster (pitch kept): shorter to generate and still within the length gate."""
    import librosa

    return Audio(librosa.effects.time_stretch(own.samples, rate=1.6), own.sample_rate)


def music_as_speech(kit, request, own, other) -> Audio:
    seed = int(kit.rng.integers(1 << 30))
    return kit.synth.generate("upbeat pop with piano and drums, 110 bpm", own.seconds, seed=seed)


def speech_as_music(kit, request, own, other) -> Audio:
    """The prompt read aloud, looped to the asked length."""
    spoken = kit.speech.synthesize(request.prompt, seed=0)
    return _fit(spoken.samples, spoken.sample_rate, request.seconds)


def copy_with_noise(kit, request, own, other) -> Audio:
    """Another miner's earlier answer, with noise 35 dB below it (beats a bit-exact check)."""
    level = float(np.sqrt(np.mean(other.samples**2))) * 10 ** (-35 / 20)
    return Audio(other.samples + level * kit.rng.standard_normal(len(other.samples)), other.sample_rate)


def espeak_tts(kit, request, own, other) -> Audio:
    return kit.espeak.synthesize(request.text, seed=request.seed)


def ignore_reference(kit, request, own, other) -> Audio:
    """A voice clone that is plain TTS in its default voice."""
    return kit.speech.synthesize(request.text, seed=request.seed)


def espeak_cloner(kit, request, own, other) -> Audio:
    return kit.world.clone(request.text, request.reference(), request.reference_text, seed=request.seed)


def replay_pitch_shifted(kit, request, own, other) -> Audio:
    import librosa

    reference = request.reference()
    shifted = librosa.effects.pitch_shift(reference.samples, sr=reference.sample_rate, n_steps=1.5)
    return Audio(shifted, reference.sample_rate)


def replay_time_stretched(kit, request, own, other) -> Audio:
    import librosa

    reference = request.reference()
    return Audio(librosa.effects.time_stretch(reference.samples, rate=0.87), reference.sample_rate)


def replay_reencoded(kit, request, own, other) -> Audio:
    """The reference through a narrow-band phone codec: 8 kHz, 8-bit-like quantisation, back up."""
    reference = request.reference()
    narrow = resample(reference, 8_000)
    coarse = np.round(pcm16(narrow) / 256.0) * 256.0 / 32767.0
    return resample(Audio(coarse, 8_000), reference.sample_rate)


def chord_and_click(kit, request, own, other) -> Audio:
    """A held major chord with a kick on every beat at the prompt's stated tempo (or 100 bpm):
    tonal, loud, rhythmic and on tempo, with no musical content at all."""
    from audionet.lib.prompts import stated_bpm

    rate, seconds = 22_050, request.seconds
    t = np.arange(int(seconds * rate)) / rate
    root = 220.0 * 2 ** (int(kit.rng.integers(12)) / 12)  # a fresh key each time: no two answers alike
    chord = sum(np.sin(2 * np.pi * root * ratio * t) for ratio in (1.0, 1.26, 1.5)) / 3
    beat = 60.0 / (stated_bpm(request.prompt) or 100)
    kick = np.zeros_like(t)
    for start in np.arange(0.0, seconds, beat):
        n = int(start * rate)
        m = min(len(t) - n, int(0.12 * rate))
        kick[n : n + m] += np.sin(2 * np.pi * 60 * t[:m]) * np.exp(-t[:m] * 30)
    return Audio(0.35 * chord + 0.5 * kick, rate)


def chords_and_click(kit, request, own, other) -> Audio:
    """Like `chord_and_click`, but a fresh random chord on every beat: nothing repeats exactly,
    so only a model of music (CLAP, an aesthetics model) can tell it from composed music."""
    from audionet.lib.prompts import stated_bpm

    rate, seconds = 22_050, request.seconds
    beat = 60.0 / (stated_bpm(request.prompt) or 100)
    n_beat = int(beat * rate)
    t = np.arange(n_beat) / rate
    beats = []
    for _ in range(int(np.ceil(seconds / beat))):
        root = 196.0 * 2 ** (int(kit.rng.integers(12)) / 12)
        chord = sum(np.sin(2 * np.pi * root * ratio * t) for ratio in (1.0, 1.26, 1.5)) / 3
        kick = np.sin(2 * np.pi * 60 * t) * np.exp(-t * 30)
        beats.append(0.35 * chord * np.minimum(1.0, 20 * t) + 0.5 * kick)
    return Audio(np.concatenate(beats)[: int(seconds * rate)], rate)


CATALOGUE: tuple[Attack, ...] = (
    Attack("noise", every, "white noise of a plausible length", noise),
    Attack("silence padding", every, "30% of an answer, then silence", silence_padding),
    Attack("1 s loop", every, "one second of an answer, looped", loop_one_second),
    Attack("1 s loop + hiss", every, "the 1 s loop with fresh hiss at -40 dBFS", loop_with_hiss),
    Attack("time-compressed", speech, "speech 1.6x faster (a short answer passed off as whole)", time_compressed),
    Attack("music as speech", speech, "procedural music for a speech request", music_as_speech),
    Attack("speech as music", music, "the prompt read aloud and looped", speech_as_music),
    Attack("copy + noise", every, "another miner's earlier answer with light noise", copy_with_noise),
    Attack("espeak", plain_speech, "the cheapest TTS engine", espeak_tts, cheap_engine=True),
    Attack("ignores reference", cloning, "plain TTS in a default voice", ignore_reference),
    Attack("replay, pitch-shifted", cloning, "the reference, +1.5 semitones", replay_pitch_shifted),
    Attack("replay, time-stretched", cloning, "the reference, 13% slower", replay_time_stretched),
    Attack("replay, re-encoded", cloning, "the reference through an 8 kHz coarse codec", replay_reencoded),
    Attack("espeak cloner", cloning, "baseline:world (espeak + WORLD)", espeak_cloner, cheap_engine=True),
    Attack("chord + click", music, "a held chord and a kick at the stated tempo", chord_and_click),
    Attack(
        "random chords + click", music, "a random chord and a kick on every beat at the stated tempo", chords_and_click
    ),
)


def for_service(name: str) -> list[Attack]:
    from audionet.lib.services import registry

    service = registry.get(name)
    return [attack for attack in CATALOGUE if attack.fits(service)]
