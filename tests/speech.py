"""The one place tests get realistic speech from (the lead may switch it to Kokoro).

`speech(text, voice)` -> Audio, cached so module fixtures share renders.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from lib.audio import Audio

VOICE_A, VOICE_B = "en-us+f3", "en-gb+m3"  # two clearly different speakers


@lru_cache(maxsize=64)
def speech(text: str, voice: Optional[str] = None) -> Audio:
    return _backend().synthesize(text, voice=voice, seed=0)


@lru_cache(maxsize=1)
def _backend():
    from models.registry import load_backend

    return load_backend("tts", "baseline:espeak", warmup=False)
