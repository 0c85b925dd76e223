"""The attack study against the Judge's listening noise (benchmarks/attacks/listening.py), on one espeak answer
that the Judge without the noise pays a random search for: the attacker picks among sign-noise draws by its own
seeds, and the reward counted is its pick re-judged with validator seeds it never saw."""

import numpy as np
import pytest

from audionet.benchmarks.attacks.listening import Seeds, clean_of, mean_score
from audionet.benchmarks.attacks.main import Judged, search_case
from audionet.benchmarks.attacks.materials import SPEECH_RATE, Case
from audionet.lib.core.audio import resample
from audionet.lib.scoring.judge import Judge
from audionet.lib.scoring.listening import DEAF
from audionet.lib.services import TTS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # ~40 verdicts of the offline Judge


@pytest.fixture(scope="module")
def judge():
    return Judge.load(devices="cpu")


@pytest.fixture(scope="module")
def lucky():
    """The study's espeak #2 (--seed 0): a random search of 16 draws lifted it 0.229 -> 0.404 before the noise."""
    request = TTS.draw(np.random.default_rng([0, 2]))
    audio = resample(TTS.generate(TTS.load_backend("baseline:espeak"), request), SPEECH_RATE)
    return Case(TTS.name, "espeak #2", "espeak", request, audio, True)


def searched(judged: Judged, case: Case, draws: int) -> dict:
    seeds = Seeds.for_study(0, own=2, validator=4)
    clean = clean_of(judged, case, seeds, mean_score(judged, case, case.audio.samples, seeds.counted(judged)))
    return search_case(judged, case, 0.003, draws, clean, seeds, 2, log=lambda line: None)


def test_a_random_search_that_buys_the_judge_without_noise_is_not_paid_by_the_validators_seeds(judge, lucky):
    deaf = searched(Judged(Judge(judge.replicas, listening=DEAF), TTS.judging), lucky, 16)
    assert deaf["gain"] > 0.1 and deaf["seen"] == deaf["score"]  # without noise the attacker's view is the verdict
    heard = searched(Judged(judge, TTS.judging), lucky, 16)
    assert heard["gain"] <= 0.05, heard
