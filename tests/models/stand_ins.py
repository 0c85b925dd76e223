"""What the tests of the families served through their own packages share: a module fixture of a spec's tiny
random-weight stand-in loaded for voice clone, and the clone checks each passes (audible, in range, reproduced by its seed, changed by
another seed and by another voice)."""

from __future__ import annotations

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.lib.services import VC
from audionet.models.random_weights import random_spec
from tests.conftest import tone

TRANSCRIPT = "The reference transcript."  # about as long as the 1.5 s reference takes to say
TEXT, LONGER = "Short line.", "A much longer line of text that takes more time to say."


def stand_in_fixture(name: str, spec: str):
    """The module fixture `name`: the voice-clone backend of `spec`'s tiny stand-in on the CPU, built once."""

    def backend(tmp_path_factory):
        folder = str(tmp_path_factory.mktemp(spec.partition(":")[0]))
        return VC.load_backend(random_spec(spec, folder, "tiny"), device="cpu")

    return pytest.fixture(scope="module", name=name)(backend)


def checked_clone(backend, rate: int) -> Audio:
    """A clone of TEXT in a 1.5 s 180 Hz tone's voice, at `rate`, after the checks every family passes."""
    reference = tone(1.5, 16_000, 180.0)
    first = backend.clone(TEXT, reference, TRANSCRIPT, seed=2)
    assert first.sample_rate == rate and first.samples.ndim == 1 and np.isfinite(first.samples).all()
    assert 0.01 < np.abs(first.samples).max() <= 1.0  # audible, in range
    assert np.array_equal(first.samples, backend.clone(TEXT, reference, TRANSCRIPT, seed=2).samples)
    assert not np.array_equal(first.samples, backend.clone(TEXT, reference, TRANSCRIPT, seed=3).samples)
    other_voice = tone(1.5, 16_000, 300.0, level=0.2)
    assert not np.array_equal(first.samples, backend.clone(TEXT, other_voice, TRANSCRIPT, seed=2).samples)
    return first
