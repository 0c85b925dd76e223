"""A TTS backend whose requests wait at a gate before espeak-ng speaks them, so the scheduler's tests (and the
miner's end-to-end ones) decide when a generation ends instead of racing a timer.

The gates are files in a folder the test owns ($AUDIONET_GATES in a miner process): a request appends its text
to `started`, then waits until a file `open` (every gate) or one named after its text's first word exists, or
until its request is stopped (`lib.core.stop`: it raises Stopped; `stoppable=False` waits for the gate regardless,
like a backend that cannot be interrupted).

    --tts.model py:tests.gated:gated     (a miner process, with AUDIONET_GATES set)
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Optional

from audionet.lib.core import stop
from audionet.lib.core.audio import Audio
from audionet.models.base import SpeechSynthesizer
from audionet.models.baselines.espeak import EspeakSynthesizer

POLL_S = 0.01


class GatedSpeech(SpeechSynthesizer):
    model_id = "test:gated-espeak"

    def __init__(self, folder: str, stoppable: bool = True):
        self.folder, self.stoppable = Path(folder), stoppable
        self.inner = EspeakSynthesizer()

    def synthesize(self, text: str, *, voice: Optional[str] = None, seed: int = 0) -> Audio:
        with open(self.folder / "started", "a") as log:
            log.write(text + "\n")
        while not (self.folder / "open").exists() and not (self.folder / first_word(text)).exists():
            if self.stoppable:
                stop.check()
            time.sleep(POLL_S)
        return self.inner.synthesize(text, voice=voice, seed=seed)

    def warmup(self) -> None:
        """No warm-up: it would wait at the gate."""


def gated(device: str = "cpu") -> GatedSpeech:
    return GatedSpeech(os.environ["AUDIONET_GATES"])


def first_word(text: str) -> str:
    return text.split()[0].strip(".,!?").lower()


def started(folder) -> list[str]:
    """The first words of the requests that reached the backend, in order."""
    path = Path(folder) / "started"
    return [first_word(line) for line in path.read_text().splitlines()] if path.exists() else []


def open_gate(folder, word: str = "open") -> None:
    (Path(folder) / word).touch()


def wait_until(condition, timeout_s: float = 60.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not come true within {timeout_s:g} s")
        time.sleep(POLL_S)


async def until(condition, timeout_s: float = 60.0, what: str = "the condition") -> None:
    """`wait_until` for a coroutine: the event loop keeps running while it waits."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not come true within {timeout_s:g} s")
        await asyncio.sleep(POLL_S)
