"""A round's verdicts in public: rows with every column, weights in the service and in the mechanism that
pays it, and a W&B table per service read back from the offline run, cut to the rows a round may have."""

import os

import numpy as np
import pytest

from audionet.lib.core.audio import Audio
from audionet.lib.core.protocol import ResponseMeta
from audionet.lib.core.telemetry import Telemetry
from audionet.lib.core.telemetry_settings import WandbSettings
from audionet.lib.core.timing import Timer
from audionet.lib.validator.client import Answer, Target
from audionet.lib.validator.mechanisms import Plan
from audionet.lib.validator.round import Scored
from audionet.lib.validator.verdicts import COLUMNS, VerdictLog, verdict_rows
from tests.files import load_json
from tests.wandb_offline import read_run

TIMEOUTS = {"tts": 30.0, "music": 60.0}


def scored(uid: int, service: str, score: float, gate_name=None, gate=None, components=None) -> Scored:
    audio = Audio(np.zeros(16_000, np.float32), 16_000)
    meta = ResponseMeta(
        service=service, model=f"model-{uid}", device="cpu-test", generation_s=0.5, seed=1, request_sha256="0" * 64
    )
    answer = Answer(Target(uid, f"5Hot{uid}", "127.0.0.1:1"), service, None, 0.123456, audio, meta)  # type: ignore[arg-type]
    reward = 0.0 if gate else score
    return Scored(answer, reward, gate, score, components or {}, gate_name, seed=2**62 + uid)


def round_of_five() -> list[Scored]:
    return [
        scored(1, "tts", 0.8, components={"naturalness": 0.7, "wer": 0.1, "content_penalty": 0.4}),
        scored(2, "tts", 0.4, "length", "wrong length: 9.00 s, expected 1.0-4.0 s", {"speech_ratio": 0.9}),
        scored(1, "music", 0.6, components={"clap": 0.5}),
        scored(2, "music", 0.0, "no_answer", "no valid answer: timed out after 60 s"),
        scored(3, "music", 0.5, components={"clap": 0.4}),
    ]


def test_rows_carry_the_verdict_and_the_weights_in_service_and_mechanism():
    weights = {"tts": [0.0, 0.75, 0.25, 0.0], "music": [0.0, 0.5, 0.0, 0.5]}
    plan = Plan(mechanism={"tts": 0, "music": 0}, split={"tts": 3.0, "music": 1.0})
    rows = verdict_rows(7, round_of_five(), [0.8, 0.3, 0.6, 0.0, 0.5], TIMEOUTS, weights, plan)
    assert all(set(COLUMNS) <= set(row) for row in rows)
    first, gated = rows[0], rows[1]
    assert first["round"] == 7 and first["hotkey"] == "5Hot1" and first["model"] == "model-1"
    assert first["device"] == "cpu-test" and first["timeout_s"] == 30.0 and first["latency_s"] == 0.1235
    assert first["weight"] == 0.75 and first["mechanism"] == 0
    assert first["seed"] == 2**62 + 1  # the listening noise's: the verdict can be judged again exactly
    assert first["mechanism_weight"] == pytest.approx(0.75 * 0.75 + 0.25 * 0.5)  # tts 3 : music 1
    assert gated["gate_name"] == "length" and gated["gate"].startswith("wrong length") and gated["reward"] == 0.0
    assert rows[3]["gate_name"] == "no_answer"
    # the score in words, as the self-check and localnet.html say it; a gated answer's why is its gate
    assert first["why"] == "parts naturalness 0.70; penalties: content took 40%" and gated["why"] is None
    assert rows[2]["why"] == "parts none measured; no penalty"  # clap is a measure, not a declared part
    unset = verdict_rows(7, round_of_five(), [0.0] * 5, TIMEOUTS, weights, None)  # before weights were set
    assert unset[0]["mechanism"] is None and unset[0]["mechanism_weight"] is None and unset[0]["weight"] == 0.75


@pytest.mark.parametrize("audio", [False, True])
def test_wandb_gets_a_table_per_service_with_every_column_and_at_most_the_rows_a_round_may_have(wandb_offline, audio):
    telemetry = Telemetry(Timer("validator"), str(wandb_offline / "log"), {"role": "validator"}, WandbSettings())
    rows = verdict_rows(1, round_of_five(), [0.5] * 5, TIMEOUTS, {"tts": [0.0] * 4, "music": [0.0] * 4})
    VerdictLog(telemetry, max_rows=4, audio=audio)(rows, round_of_five())
    telemetry.close()

    run = read_run(str(wandb_offline))
    (logged,) = [step for step in run["history"] if "verdicts/rows" in step]
    assert logged["verdicts/rows"] == 4 and logged["verdicts/dropped"] == 1  # 5 answers, 4 rows a round
    files = os.path.join(os.path.dirname(run["path"]), "files")
    tables = {s: load_json(os.path.join(files, logged[f"tables/verdicts/{s}/path"])) for s in ("tts", "music")}
    extra = ["audio"] if audio else []
    # every penalty the service declares is a column, measured this round or not
    tts_components = ["content_penalty", "naturalness", "naturalness_gate_penalty", "speech_ratio", "wer"]
    assert tables["tts"]["columns"] == [*COLUMNS, *tts_components, *extra]
    music_penalties = ["continuity_penalty", "duration_penalty", "loop_penalty", "not_music_penalty", "speech_penalty"]
    assert tables["music"]["columns"] == [*COLUMNS, "clap", *music_penalties, *extra]
    assert [len(t["data"]) for t in tables.values()] == [2, 2]  # the fifth row (uid 3's music) was cut
    tts = [dict(zip(tables["tts"]["columns"], row)) for row in tables["tts"]["data"]]
    assert tts[0]["naturalness"] == 0.7 and tts[1]["gate_name"] == "length" and tts[1]["naturalness"] is None
    if audio:
        assert tts[0]["audio"] == "verdicts/audio/tts/uid1" and logged["verdicts/audio/tts/uid1/_type"] == "audio-file"
        assert os.path.exists(os.path.join(files, logged["verdicts/audio/tts/uid1/path"]))
        assert "verdicts/audio/music/uid3" not in logged  # a row cut is a clip not uploaded
