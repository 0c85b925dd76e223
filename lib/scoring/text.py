"""Text normalisation and word error rate for intelligibility.

Both the prompt and Whisper's transcript go through the same normaliser, so
"7 o'clock," and "Seven o'clock" compare equal: lower case, digits spelled
out as words (lib.prompts.spoken, the same rules the prompt generator writes
numbers with), punctuation dropped, apostrophes removed so "o'clock" ==
"oclock", whitespace collapsed.
"""

from __future__ import annotations

import jiwer

from audionet.lib.prompts.spoken import normalise_for_wer


def word_error_rate(reference: str, heard: str) -> float:
    """WER of `heard` against `reference` after normalisation, capped at 1."""
    ref, hyp = normalise_for_wer(reference), normalise_for_wer(heard)
    if not ref:
        return 0.0 if not hyp else 1.0
    if not hyp:
        return 1.0
    return min(1.0, float(jiwer.wer(ref, hyp)))
