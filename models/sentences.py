"""Long text -> sentence-sized pieces for speech models with a short context, and
the pieces' audio joined back with a short pause. Shared by every TTS backend."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import numpy as np

from audionet.lib.core.audio import Audio, resample

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_CLAUSE_END = re.compile(r"(?<=[,])\s+")
PAUSE_SECONDS = 0.2


def split_sentences(text: str, max_chars: int = 250) -> list[str]:
    """Sentences of at most `max_chars` (longer ones split at commas, then at spaces)."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        pieces.extend(_fit(sentence, max_chars))
    return [p for p in pieces if p.strip()]


def _fit(sentence: str, max_chars: int) -> list[str]:
    if len(sentence) <= max_chars:
        return [sentence]
    out, current = [], ""
    for part in _CLAUSE_END.split(sentence) if "," in sentence else sentence.split(" "):
        for word_chunk in [part] if len(part) <= max_chars else part.split(" "):
            joined = f"{current} {word_chunk}".strip()
            if len(joined) > max_chars and current:
                out.append(current)
                joined = word_chunk[:max_chars]
            current = joined
    if current:
        out.append(current)
    return out


def join_clips(clips: Iterable[Audio], pause_seconds: float = PAUSE_SECONDS) -> Audio:
    """Concatenate clips (resampled to the first one's rate) with silence between them."""
    clips = list(clips)
    if not clips:
        raise ValueError("nothing to join")
    rate = clips[0].sample_rate
    gap = np.zeros(int(pause_seconds * rate), np.float32)
    parts: list[np.ndarray] = []
    for index, clip in enumerate(clips):
        if index:
            parts.append(gap)
        parts.append(resample(clip, rate).samples)
    return Audio(np.concatenate(parts), rate)


def speak_in_sentences(text: str, speak: Callable[[str], Audio], max_chars: int = 250) -> Audio:
    """`speak` each sentence of `text` and join the results."""
    pieces = split_sentences(text, max_chars)
    if not pieces:
        from audionet.lib.core.errors import WireError

        raise WireError("text has nothing to speak")
    return join_clips(speak(piece) for piece in pieces)
