"""What the Judge takes and gives: a job (an answer's audio and what a right answer looks like) and its
verdict. Data only, so a service can describe its requests' expectations without importing the scoring
stack."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from audionet.lib.core.audio import Audio
from audionet.lib.scoring.listening import DEAF, Listening


@dataclass(frozen=True)
class Expect:
    """What a right answer to one request looks like, as the service reads it from the request."""

    seconds: tuple[float, float]  # the duration a right answer can have (the length gate)
    words: Optional[str] = None  # the words it must say (speech: ASR is scored against them)
    description: Optional[str] = None  # the text it must fit (music: CLAP, a stated tempo)
    target_seconds: Optional[float] = None  # the length asked for (music's duration penalty)
    reference: Optional[Audio] = None  # the voice it must have (voice clone: speaker and pitch)
    carried: tuple[Audio, ...] = ()  # audio the request carried: an answer that replays it is gated


@dataclass
class Job:
    audio: Optional[Audio]  # None: missing or undecodable
    expect: Expect
    label: str = ""  # miner uid/hotkey or file name, for duplicate reports
    seed: Optional[int] = None  # the ASR's listening noise (lib/scoring/listening.py); None: the Judge draws one


@dataclass
class Clip:
    """An answer that passed the gates, handed to the analyses, which write its raw `measures`."""

    audio: Audio
    expect: Expect
    measures: dict[str, float]
    seed: int = 0  # the verdict's listening-noise seed
    listening: Listening = DEAF  # how the ASR hears it (the Judge's)
    heard: Optional[Audio] = None  # what the music judges hear, where the declaration floors it (music_floor)


@dataclass
class Verdict:
    score: float  # 0..1, finite; 0 when a gate fired
    measures: dict[str, float] = field(default_factory=dict)  # raw, as the analyses wrote them
    parts: dict[str, float] = field(default_factory=dict)  # the declaration's 0..1 parts
    penalties: dict[str, float] = field(default_factory=dict)  # the declaration's multipliers
    gates: dict[str, Optional[str]] = field(default_factory=dict)
    seed: Optional[int] = None  # the ASR's listening-noise seed: the same answer and seed give the same verdict

    @property
    def gate(self) -> Optional[str]:
        """The first gate that fired, or None."""
        return next((reason for reason in self.gates.values() if reason), None)

    @property
    def gate_name(self) -> Optional[str]:
        """The name of the first gate that fired, or None."""
        return next((name for name, reason in self.gates.items() if reason), None)

    @property
    def components(self) -> dict[str, float]:
        """The finite raw measures and the parts, for tables and logs (penalties as `<name>_penalty`: the
        share of the score each one took)."""
        taken = {f"{name}_penalty": 1.0 - factor for name, factor in self.penalties.items()}
        return {k: v for k, v in {**self.measures, **self.parts, **taken}.items() if _finite(v)}


def _finite(value) -> bool:
    try:
        return value == value and abs(float(value)) != float("inf")
    except (TypeError, ValueError):
        return False
