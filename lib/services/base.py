"""What a service is: everything the miner, the validator, audionet-score and
audionet-bench need to know about one kind of request, in one object.

A `Service` subclass binds (like a row of a task registry):

* the wire: its request model, size cap, the longest answer it may ask for;
* the miner: the backend interface it needs and how one request is generated;
* the requests: one factory (`request`) that turns a `Prompt` into a checked
  request, and `draw`, which makes the validator's fresh prompts (and a
  benchmark's, sized by `workload`);
* the judge: how it is judged, declared as data (`judging`: gates, analyses, parts and penalties with
  their 0..1 ranges; lib/scoring/declaration.py), and what a right answer to one request looks like
  (`expect`: its length, words, description, reference voice);
* reports: its title and the metrics shown in quality tables.

`SpeechService` is the base of the services whose answer speaks `request.text` (TTS, voice clone): its wire
check measures how long the text takes to say, not guessed from its characters: espeak-ng reads it at its
fastest seeded rate (185 words a minute), expanding whatever the text holds (CJK, symbols, e-mail addresses,
URLs, Roman numerals, maths) the way its text rules do, and the count stops just past the limit (about 2 ms per
second of speech). Kokoro uses the same espeak-ng front end and measured 0.9-1.3x that length on such texts.
What else the speech services share (the parts that judge speech, workload texts) is lib/services/speech.py.

Miner, validator, localnet, score and bench only iterate the registry
(`audionet.lib.services`); nothing outside a service module branches on a
service's name.

The judge's half is data: the Judge (lib/scoring/judge.py) runs a service's declaration on its jobs and
never calls back into the service. A service imports only the declaration and job types, which are data
and arithmetic: a miner loads services to generate, and generation imports no scoring stack (jiwer,
pyworld, the evaluators, the Judge; tests/lib/test_lean_imports.py).
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

import numpy as np
from pydantic import ValidationError

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import (
    MAX_PLAIN_REQUEST_BYTES,
    ServiceRequest,
    answer_limit_seconds,
    decode_response_audio,
    one_line,
    parse_body,
    speech_seconds,
)
from audionet.lib.prompts.references import Reference
from audionet.lib.scoring.declaration import Judging
from audionet.lib.scoring.jobs import Expect, Job
from audionet.models.base import Backend
from audionet.models.baselines.espeak import EspeakSynthesizer
from audionet.models.factory import load_backend


@dataclass(frozen=True)
class Prompt:
    """What a request asks for before it is one. `text` is the words to speak or the music
    description; `seconds` and `reference` are used by the services whose `inputs` name them."""

    text: str
    seed: int = 0
    seconds: Optional[float] = None
    reference: Optional[Reference] = None


def split_seconds(target: float, per_request_limit: float) -> list[float]:
    """Equal parts of `target` seconds, none longer than one request may ask for."""
    count = max(1, math.ceil(target / per_request_limit - 1e-9))
    return [target / count] * count


class Service(ABC):
    name: ClassVar[str]  # URL /v1/<name>, flags --<name>.*, timing and score keys
    title: ClassVar[str]  # for people: tables, plots
    request_model: ClassVar[type[ServiceRequest]]
    backend_interface: ClassVar[type[Backend]]
    default_backend: ClassVar[str]  # the miner's default spec: runs from the install alone
    offline_backend: ClassVar[str]  # the best backend with no hub access (localnet's default)
    timeout_s: ClassVar[float]  # the validator's default per-request timeout (whole exchange)
    max_seconds: ClassVar[float]  # the longest audio a request may ask for
    max_request_bytes: ClassVar[int] = MAX_PLAIN_REQUEST_BYTES
    inputs: ClassVar[frozenset[str]] = frozenset()  # Prompt fields beyond text and seed: "seconds", "reference"
    seconds_range: ClassVar[tuple[float, float]] = (1.0, 30.0)  # when "seconds" is an input
    text_help: ClassVar[str] = "the text"  # what audionet-score's --text is for this service
    judging: ClassVar[Judging]  # how its answers are judged (gates, analyses, parts, penalties)
    metrics: ClassVar[tuple[tuple[str, str], ...]]  # (measure, column title) in quality tables

    # --- the wire -------------------------------------------------------------------------
    def parse(self, body: bytes) -> ServiceRequest:
        """A request body -> the checked request, or WireError (one line, 4xx)."""
        request = parse_body(self.request_model, body, self.max_request_bytes)
        self.check(request)
        return request

    def check(self, request: ServiceRequest) -> None:
        """Checks a model cannot express (decoding carried audio); raise WireError."""

    @property
    def answer_limit_s(self) -> float:
        return answer_limit_seconds(self.max_seconds)

    def decode_answer(self, flac: bytes) -> Audio:
        return decode_response_audio(flac, self.answer_limit_s)

    # --- the miner ------------------------------------------------------------------------
    def load_backend(
        self,
        spec: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        preset: Optional[str] = None,
        warmup: bool = True,
    ) -> Backend:
        """The backend `spec` names (models.factory), checked to implement this service's interface."""
        return load_backend(
            spec, self.backend_interface, device=device, dtype=dtype, preset=preset, warmup=warmup, label=self.name
        )

    @abstractmethod
    def generate(self, backend: Backend, request: ServiceRequest) -> Audio:
        """One request through its backend (called from a worker thread)."""

    def answer_seconds(self, backend: Backend, request: ServiceRequest) -> Optional[float]:
        """At least how long `backend`'s answer to `request` lasts, by the backend's own reckoning, counted up to
        just past the answer limit (a worker thread); None where it cannot tell."""
        return None

    # --- requests: one factory, and fresh draws for the validator and benchmarks -----------
    @abstractmethod
    def build(self, prompt: Prompt) -> ServiceRequest:
        """The request model for `prompt` (may raise ValidationError or WireError)."""

    def request(self, prompt: Prompt) -> ServiceRequest:
        """The one request factory: a checked request, or WireError with one line."""
        try:
            request = self.build(prompt)
        except ValidationError as error:
            raise WireError(one_line(error)) from None
        self.check(request)
        return request

    def add_flags(self, parser) -> None:
        """Flags for where this service's prompts come from (validator and benchmark)."""

    def source_settings(self, args) -> Any:
        """The flags of `add_flags` as typed settings (None: the service has none). Entry points call it;
        everything below them takes the settings."""
        return None

    def open_sources(self, settings: Any = None, *, real_network: bool = False) -> Any:
        """What `draw` needs beyond an rng (e.g. reference voices), from `source_settings`' settings."""
        return None

    @abstractmethod
    def draw(self, rng: np.random.Generator, sources: Any, *, seconds: Optional[float] = None) -> ServiceRequest:
        """A fresh request as a validator sends one; `seconds` asks for about that much audio."""

    def calibrate(self, backend: Backend) -> Any:
        """Whatever `workload` needs to know about a backend (a speaking rate); None by default."""
        return None

    def workload(
        self, rng: np.random.Generator, sources: Any, target_seconds: float, calibration: Any = None
    ) -> list[ServiceRequest]:
        """Requests whose answers add up to about `target_seconds`, each within the protocol's limits."""
        return [self.draw(rng, sources, seconds=s) for s in split_seconds(target_seconds, self.max_seconds)]

    # --- the judge ------------------------------------------------------------------------
    @abstractmethod
    def expected_seconds(self, request: ServiceRequest) -> tuple[float, float]:
        """The (min, max) duration a right answer to `request` can have."""

    def planned_seconds(self, request: ServiceRequest) -> float:
        """The audio seconds the miner plans `request`'s generation for (its slot and its time): the middle of
        `expected_seconds`."""
        low, high = self.expected_seconds(request)
        return (low + high) / 2

    @abstractmethod
    def expect(self, request: ServiceRequest) -> Expect:
        """What a right answer to `request` looks like: its duration range, and whichever of the words,
        description, target length, reference voice and carried audio the declared analyses read."""

    def job(self, request: ServiceRequest, audio: Optional[Audio], label: str = "", seed: Optional[int] = None) -> Job:
        """One answer to `request` as the Judge takes it (`audio` None: missing or undecodable; `seed`: its
        listening noise's, None: the Judge draws one)."""
        return Job(audio, self.expect(request), label, seed=seed)

    def __repr__(self) -> str:
        return f"<service {self.name}>"


def check_speakable(text: str, max_seconds: float) -> float:
    """The seconds espeak-ng takes to say `text` at its fastest rate; refuse (400) text with nothing to speak
    (or that it says nothing for: fullwidth or circled digits, say), or that takes longer than `max_seconds`:
    the caller's mistake, decided before any generation, is never a 500."""
    # a letter or digit, as written: rewriting digits as words (`prompts.spoken_form`) neither adds nor removes one
    if not any(ch.isalnum() for ch in text):
        raise WireError("the text has nothing to speak: no letters or digits")
    seconds = EspeakSynthesizer().spoken_seconds(text, max_seconds)
    MEASURED.add(text, seconds)
    if seconds == 0:
        raise WireError("the text has nothing to speak: it reads as silence")
    if seconds > max_seconds:
        raise WireError(f"the text takes more than {max_seconds:g} s to say; the limit is {max_seconds:g} s")
    return seconds


class Measured:
    """The spoken seconds the length check measured for its last `size` texts: the miner's scheduler
    plans with the same figure a moment later, without measuring again on the event loop."""

    def __init__(self, size: int = 256):
        self.size, self.seconds = size, OrderedDict()
        self.lock = threading.Lock()  # parsing runs in worker threads

    def add(self, text: str, seconds: float) -> None:
        with self.lock:
            self.seconds[text] = seconds
            while len(self.seconds) > self.size:
                self.seconds.popitem(last=False)

    def get(self, text: str) -> Optional[float]:
        with self.lock:
            return self.seconds.get(text)


MEASURED = Measured()


class SpeechService(Service):
    """A service whose answer speaks `request.text`."""

    def check(self, request) -> None:
        check_speakable(request.text, self.max_seconds)  # a 400 before any generation

    def expected_seconds(self, request) -> tuple[float, float]:
        return speech_seconds(request.text)

    def planned_seconds(self, request) -> float:
        """At least what the length check measured, when it did: text in other scripts, symbols and numbers
        speaks far longer than its characters suggest."""
        return max(super().planned_seconds(request), MEASURED.get(request.text) or 0.0)
