"""What the GPU tables are measured against, stated once: seed 003's H100 row per service (BittAudio's
published per-GPU table: seconds for that many seconds of audio) and issue 44's targets on a GPU."""

from __future__ import annotations

# seed 003, H100: (seconds, for this many seconds of audio)
H100_GENERATION = {"music": (34.18, 15.0), "tts": (4.36, 30.0), "vc": (82.15, 30.0)}
H100_EVALUATION = {"music": (5.80, 15.0), "tts": (1.25, 30.0), "vc": (1.30, 30.0)}
# issue 44: generation on a GPU, (at most these seconds, for this many seconds of audio)
GENERATION_TARGETS = {"music": (1.0, 15.0), "tts": (0.3, 30.0), "vc": (1.0, 30.0)}
GOAL_S_PER_CLIP = 0.25  # evaluation, standard profile on a GPU, a whole round batched
