"""Backends that stop part-way when their request is abandoned (`lib.stop`): espeak-ng through its audio
callback, Kokoro through onnxruntime's terminate flag; and the spoken-length count the services use."""

import pytest

from audionet.lib.core.stop import Stop, Stopped, running_under
from audionet.models.baselines.espeak import EspeakSynthesizer
from tests.stress.texts import OVERLONG_TEXTS


def test_espeak_stops_when_its_request_is_stopped():
    espeak, stop = EspeakSynthesizer(), Stop()
    with running_under(stop):
        assert espeak.synthesize("Not stopped yet.").seconds > 0.5
        stop.set("the caller left")
        with pytest.raises(Stopped, match="the caller left"):
            espeak.synthesize(OVERLONG_TEXTS["CJK"])


def test_the_spoken_length_is_counted_only_up_to_the_limit():
    espeak = EspeakSynthesizer()
    short = espeak.spoken_seconds("A short sentence.", 30.0)
    assert 0.5 < short < 3.0 and short == espeak.spoken_seconds("A short sentence.", 300.0)
    capped, full = espeak.spoken_seconds(OVERLONG_TEXTS["CJK"], 30.0), espeak.spoken_seconds(OVERLONG_TEXTS["CJK"], 1e4)
    assert 30.0 < capped < 31.0 < 100.0 < full


def test_kokoro_stops_inside_an_onnx_run():
    from audionet.lib.services import TTS

    backend = TTS.load_backend("kokoro:", warmup=False)
    session, stop, runs = backend.kokoro.sess, Stop(), []
    real_run = session.session.run

    def first_run_abandoned(names, feeds, options=None):
        runs.append(options)
        stop.set("timed out")  # as the scheduler does from the event loop: sets the run's terminate flag
        return real_run(names, feeds, options)

    session.session.run = first_run_abandoned
    try:
        with running_under(stop), pytest.raises(Stopped, match="timed out"):
            backend.synthesize("First sentence here. " * 10)
    finally:
        session.session.run = real_run
    assert len(runs) == 1 and runs[0].terminate  # ended inside its first run: no sentence after it started
