"""What a validator keeps across a restart: its duplicate history (an answer replayed after a restart is caught)
and its coverage (the pass it was in goes on)."""

import asyncio
import json
import logging
import math
import sqlite3
import time
from types import SimpleNamespace

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.chain import OfflineChain
from audionet.lib.scoring.duplicates import fingerprint
from audionet.lib.scoring.judge import Judge
from audionet.lib.validator.client import HEALTH_TIMEOUT_S, Answer
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


def test_a_round_judged_on_two_devices_records_what_each_judged(tmp_path, caplog):
    from audionet.lib.scoring.replicas import EvaluatorReplicas

    coverage = {"miners": 4, "of": 4, "pass": 1, "since_last_s": {"first_time": 4, "max": None}}
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()  # the validator's run makes its state folder
    one = Validator(
        WALLET, None, ValidatorSettings(state_dir=str(tmp_path / "one"), services=("tts",)), judge=Judge(None)
    )
    one._log_round(7, [], [], coverage)
    assert "evaluators" not in json.loads((tmp_path / "one" / "rounds.jsonl").read_text())  # one device: as before
    replicas = EvaluatorReplicas([SimpleNamespace(device="cpu")] * 2, ["gpu-a", "gpu-b"])
    settings = ValidatorSettings(state_dir=str(tmp_path / "two"), services=("tts",))
    two = Validator(WALLET, None, settings, judge=Judge(replicas))
    replicas.judged = [3, 1]
    with caplog.at_level(logging.INFO, logger="validator"):
        two._log_round(7, [], [], coverage)
    record = json.loads((tmp_path / "two" / "rounds.jsonl").read_text())
    assert [(row["label"], row["clips"]) for row in record["evaluators"]] == [("gpu-a", 3), ("gpu-b", 1)]
    assert "round 0 evaluators: gpu-a 3 clips; gpu-b 1 clip" in caplog.text
    assert replicas.judged == [0, 0]  # the next round counts its own


class DownMiners:
    """A MinerClient whose miners never answer: notes whom each round asked (a failed answer needs no evaluator)."""

    def __init__(self):
        self.asked: list[int] = []

    async def served(self, target, timeout=HEALTH_TIMEOUT_S, wanted=None):
        return None

    async def query(self, target, service, request, timeout):
        self.asked.append(target.uid)
        return Answer(target, service.name, request, latency_s=0.01, error="connection refused")


def test_a_restarted_validator_finishes_its_pass_and_remembers_when_each_miner_was_scored(tmp_path, wallets):
    validator = wallets("validator")
    chain = OfflineChain(str(tmp_path / "chain.sqlite"), wallet=validator)
    chain.register(validator.hotkey.ss58_address, "cold", stake=1000.0, validator_permit=True)
    for n in range(10):
        miner = wallets(f"miner{n}")
        chain.register(miner.hotkey.ss58_address, "cold")
        asyncio.run(OfflineChain(chain.path, wallet=miner).serve("127.0.0.1", 9000 + n))
    settings = ValidatorSettings(
        str(tmp_path / "state"), services=("tts",), sample_size=4, round_budget_s=math.inf, seed=3
    )
    client = DownMiners()
    before = Validator(validator, chain, settings, judge=Judge(None))
    for _ in range(2):
        asyncio.run(before.run_round(client))  # 8 of the pass's 10 asked
    after = Validator(validator, chain, settings, judge=Judge(None))  # the restart, from the saved state
    assert after.coverage.last_scored == before.coverage.last_scored and len(after.coverage.last_scored) == 8
    assert after.coverage.passes == 1 and after.coverage.per_miner_s == before.coverage.per_miner_s
    first = set(client.asked)
    asyncio.run(after.run_round(client))  # the pass's last 2, then 2 of a new pass
    assert len(first) == 8 and set(range(1, 11)) - first <= set(client.asked[8:]) and after.coverage.passes == 2
    # uid 3 is re-registered under a new hotkey: a new miner, never scored by this validator
    scored_before = after.coverage.last_scored[3] if 3 in after.coverage.last_scored else None
    old = asyncio.run(chain.metagraph()).hotkeys[3]
    after.health[old] = (time.monotonic(), None)  # its health, as if asked
    with sqlite3.connect(chain.path) as db:
        db.execute("UPDATE neurons SET hotkey = 'a new hotkey' WHERE uid = 3")
    begun = time.time()
    asyncio.run(after.run_round(client))
    assert scored_before is not None and after.coverage.last_scored.get(3, begun) >= begun
    assert old not in after.health  # the old hotkey's health is gone
