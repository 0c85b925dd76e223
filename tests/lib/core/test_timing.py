"""Timing maths against hand-computed values, thread safety, and the miner's
signed generation_s coming from the same measurement as the timing log."""

import json
import math
import threading

import pytest

from audionet.benchmarks.common.timing import modified_z_scores, summarise, t_interval
from audionet.lib.core.timing import Timer, scalars
from audionet.models.base import Backend


def test_lifetime_window_percentiles_and_rtf_by_hand():
    timer = Timer("miner", device="cpu-test", window=3)
    for seconds in (1.0, 2.0, 3.0, 4.0, 10.0):
        timer.record("tts", "generation", seconds, audio_seconds=2.0)
    ((key, stats),) = timer.snapshot().items()
    assert key == ("miner", "tts", "generation", "cpu-test")
    # lifetime: 20 s over 5 samples; window (last 3): 3, 4, 10
    assert (stats.count, stats.avg_s, stats.min_s, stats.max_s) == (5, 4.0, 1.0, 10.0)
    assert stats.window_count == 3 and stats.window_avg_s == pytest.approx(17 / 3)
    assert stats.p50_s == 4.0
    assert stats.p95_s == pytest.approx(4.0 + 0.9 * 6.0)  # rank 0.95 * 2 = 1.9 between 4 and 10
    # 20 s of compute for 10 s of audio: RTF 2, i.e. half real time
    assert stats.rtf == pytest.approx(2.0) and stats.x_realtime == pytest.approx(0.5) and stats.audio_s == 10.0


def test_rtf_only_counts_samples_that_report_audio():
    timer = Timer("validator")
    timer.record("vc", "evaluation", 3.0, audio_seconds=6.0)
    timer.record("vc", "evaluation", 5.0)  # no audio length: in avg, not in RTF
    stats = timer.snapshot()[("validator", "vc", "evaluation", "cpu")]
    assert stats.avg_s == 4.0 and stats.rtf == pytest.approx(0.5)
    no_audio = Timer("validator")
    no_audio.record("tts", "roundtrip", 1.0)
    assert next(iter(no_audio.snapshot().values())).rtf is None


def test_measure_sets_audio_afterwards_and_keeps_failures_apart():
    timer = Timer("miner")
    with timer.measure("music", "generation") as m:
        m.audio_seconds = 4.0
    assert m.elapsed > 0 and not m.failed
    with pytest.raises(RuntimeError), timer.measure("music", "generation", audio_seconds=4.0):
        raise RuntimeError("backend broke")
    stages = {key.stage: stats for key, stats in timer.snapshot().items()}
    assert stages["generation"].count == 1 and stages["generation"].rtf == pytest.approx(m.elapsed / 4.0)
    assert stages["generation/failed"].count == 1 and stages["generation/failed"].rtf is None


def test_scalar_keys_and_backend_stage_hook():
    class Staged(Backend):
        pass

    timer = Timer("miner", device="dev")
    backend = Staged()
    backend.measure = timer.stage_hook("tts")
    with backend.stage("decoder"):
        pass
    timer.record("tts", "generation", 2.0, audio_seconds=4.0)
    values = scalars(timer.snapshot())
    assert values["timing/tts/generation/avg_s"] == 2.0 and values["timing/tts/generation/rtf"] == 0.5
    assert values["timing/tts/generation/decoder/count"] == 1
    assert "timing/tts/generation/decoder/rtf" not in values  # no audio on the stage: no RTF key
    assert {k.rsplit("/", 1)[1] for k in values} == {"avg_s", "min_s", "max_s", "p50_s", "p95_s", "count", "rtf"}


def test_samples_of_other_devices_get_their_own_scalar_keys():
    class Staged(Backend):
        pass

    timer = Timer("miner", device="pool")
    backend = Staged()
    backend.measure = timer.stage_hook("tts", device="nvidia-geforce-gtx-1660")
    with backend.stage("decoder"):
        pass
    timer.record("tts", "generation", 1.0, audio_seconds=4.0, device="nvidia-geforce-rtx-3090")
    timer.record("tts", "generation", 3.0, audio_seconds=4.0, device="nvidia-geforce-gtx-1660")
    timer.record("tts", "generation", 2.0, audio_seconds=8.0)  # the miner-wide key
    values = scalars(timer.snapshot(), own_device="pool")
    assert values["timing/tts/generation/avg_s"] == 2.0
    assert values["device/nvidia-geforce-rtx-3090/tts/generation/avg_s"] == 1.0
    assert values["device/nvidia-geforce-gtx-1660/tts/generation/rtf"] == 0.75
    assert values["device/nvidia-geforce-gtx-1660/tts/generation/decoder/count"] == 1
    assert len({k for k in scalars(timer.snapshot()) if k.endswith("generation/avg_s")}) == 1  # without: one key


def test_records_from_many_threads_are_all_counted():
    timer = Timer("miner", window=10)

    def work():
        for _ in range(500):
            timer.record("tts", "generation", 0.5, audio_seconds=1.0)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = next(iter(timer.snapshot().values()))
    assert stats.count == 4000 and stats.avg_s == 0.5 and stats.audio_s == 4000.0 and stats.window_count == 10


def test_bad_samples_are_ignored():
    timer = Timer("miner")
    timer.record("tts", "generation", math.nan)
    timer.record("tts", "generation", -1.0)
    assert timer.snapshot() == {}


def test_outliers_and_confidence_interval_by_hand():
    runs = [10.0, 10.1, 9.9, 10.0, 30.0]
    # median 10, MAD = median(|0, .1, .1, 0, 20|) = 0.1 -> z(30) = 0.6745 * 20 / 0.1 = 134.9
    assert modified_z_scores(runs)[-1] == pytest.approx(134.9)
    s = summarise(runs)
    assert (s.n, s.outliers, s.min, s.max) == (5, 1, 9.9, 30.0)
    assert s.mean == pytest.approx(10.0)
    # sd of 10, 10.1, 9.9, 10 = sqrt(0.02 / 3); t(0.975, 3) = 3.182446
    assert s.ci95 == pytest.approx(3.182446 * math.sqrt(0.02 / 3) / 2, rel=1e-5)
    # MAD 0: mean absolute deviation 0.25 -> z(2) = 1 / (1.253314 * 0.25) = 3.19, not an outlier
    assert summarise([1.0, 1.0, 1.0, 2.0]).outliers == 0
    kept = summarise(runs, drop_outliers=False)  # the pool study: every round counts
    assert (kept.outliers, kept.mean) == (0, pytest.approx(14.0))
    assert t_interval([5.0]) == 0.0


def test_miner_signs_the_generation_time_the_timer_recorded(tmp_path, wallets):
    from fastapi.testclient import TestClient

    from audionet.lib.core.auth import AccessPolicy, sign_request
    from audionet.lib.core.chain import OfflineChain
    from audionet.lib.core.protocol import unpack_response
    from audionet.lib.miner.app import MinerApp
    from audionet.lib.miner.pool import from_backends
    from audionet.lib.services import TTS

    chain = OfflineChain(str(tmp_path / "chain.sqlite"))
    miner, validator = wallets("miner"), wallets("validator")
    chain.register(
        validator.hotkey.ss58_address, validator.coldkeypub.ss58_address, stake=1000.0, validator_permit=True
    )
    chain.register(miner.hotkey.ss58_address, miner.coldkeypub.ss58_address)
    timer = Timer("miner", device="cpu-test")
    pool = from_backends({"tts": TTS.load_backend("baseline:espeak")}, timer)
    service = MinerApp(miner, chain, pool, AccessPolicy())
    body = json.dumps({"text": "Time me, please.", "seed": 3}).encode()
    with TestClient(service.app()) as client:
        reply = client.post(
            "/v1/tts", content=body, headers=sign_request(validator, "/v1/tts", body, miner.hotkey.ss58_address)
        )
    assert reply.status_code == 200, reply.text
    meta, _flac = unpack_response(reply.content)
    stats = timer.snapshot()[("miner", "tts", "generation", "cpu-test")]
    assert stats.count == 1 and stats.max_s == meta.generation_s and stats.audio_s > 0.5


def test_long_targets_split_into_requests_inside_the_protocol_limits():
    import numpy as np

    from audionet.lib.core.protocol import MAX_TEXT_CHARS
    from audionet.lib.services import MUSIC, TTS
    from audionet.lib.services.base import split_seconds

    assert split_seconds(60.0, 30.0) == [30.0, 30.0] and split_seconds(5.0, 30.0) == [5.0]
    music = MUSIC.workload(np.random.default_rng(0), None, 60.0)
    assert [r.seconds for r in music] == [30.0, 30.0]
    # 17.5 characters per second: 30 s of speech is 525 characters, more than one request may carry
    speech = TTS.workload(np.random.default_rng(0), None, 30.0, calibration=17.5)
    assert len(speech) == 2
    assert all(len(r.text) <= MAX_TEXT_CHARS for r in speech)
    assert sum(len(r.text) for r in speech) == pytest.approx(525, abs=4)


class QueuedCuda:
    """Stands in for torch's CUDA (no GPU here): work queued on a device finishes only when someone
    synchronises, which takes `queued_s` once."""

    def __init__(self, queued_s: float):
        self.queued_s, self.calls = queued_s, []

    def is_initialized(self) -> bool:
        return True

    def synchronize(self, device) -> None:
        import time

        self.calls.append(device)
        if self.queued_s:
            time.sleep(self.queued_s)  # the GPU finishing what the block queued
            self.queued_s = 0.0


def test_a_stage_on_a_cuda_device_waits_for_its_queued_gpu_work(monkeypatch):
    import sys
    import types

    cuda = QueuedCuda(0.0)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    timer = Timer("bench")
    with timer.measure("tts", "generation/decoder", sync="cuda:1") as timing:
        assert cuda.calls == ["cuda:1"]  # earlier queued work finished before the clock started
        cuda.queued_s = 0.05  # this block launched 50 ms of GPU work and returned at once
    assert cuda.calls == ["cuda:1", "cuda:1"] and timing.elapsed >= 0.05
    hook = timer.stage_hook("tts", sync="cuda:0")
    with hook("codec"):
        pass
    assert cuda.calls[-2:] == ["cuda:0", "cuda:0"]
    with timer.measure("tts", "generation", sync="cpu"), timer.measure("tts", "generation"):
        pass
    assert len(cuda.calls) == 4  # the CPU and unsynchronised blocks never wait
