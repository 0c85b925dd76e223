"""The validator's duplicate history lives beside its state: an answer replayed after a restart is caught."""

from types import SimpleNamespace

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.scoring.duplicates import fingerprint
from audionet.lib.scoring.judge import Judge
from audionet.lib.validator.loop import Validator, ValidatorSettings

WALLET = SimpleNamespace(hotkey=SimpleNamespace(ss58_address="validator"))


def test_an_answer_replayed_after_a_restart_is_caught(tmp_path, speech):
    settings = ValidatorSettings(state_dir=str(tmp_path), services=("tts",))
    clip = speech("The ferry to the island leaves at noon on Sundays.")
    before = Validator(WALLET, None, settings, judge=Judge(evaluators=None))
    before.judge.duplicates.check_round("tts", ["uid 7"], [fingerprint(clip)])  # a round's answer...
    before.judge.duplicates.save(before.history_path)  # ...saved with the round's state
    after = Validator(WALLET, None, settings, judge=Judge(evaluators=None))  # the restart
    replay = Audio(np.concatenate([np.zeros(800, np.float32), clip.samples * 0.5]), clip.sample_rate)
    (reason,) = after.judge.duplicates.check_round("tts", ["uid 9"], [fingerprint(replay)])
    assert reason and "earlier answer (uid 7)" in reason
    fresh = Validator(
        WALLET, None, ValidatorSettings(state_dir=str(tmp_path / "new"), services=("tts",)), judge=Judge(None)
    )
    assert fresh.judge.duplicates.check_round("tts", ["uid 9"], [fingerprint(replay)]) == [None]
