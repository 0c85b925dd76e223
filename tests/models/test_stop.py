"""Backends that stop part-way when their request is abandoned (`lib.core.stop`): espeak-ng through its audio
callback, Kokoro through onnxruntime's terminate flag; and the spoken-length count the services use."""

import pytest

from audionet.lib.core.errors import WireError
from audionet.lib.core.stop import Stop, Stopped, running_under
from audionet.lib.services.base import check_speakable
from audionet.models.baselines.espeak import EspeakSynthesizer
from tests.stress.texts import OVERLONG_TEXTS, SILENT_UNITS


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


def test_espeak_stops_just_past_the_audio_budget_with_a_400_that_counts():
    """Issue 37: the length check reads at espeak-ng's fastest seeded rate, so a slower seed spoke 34-38 s of a
    text at the limit, refused only after the whole of it. Under a budget, synthesis stops just past it."""
    espeak, stop = EspeakSynthesizer(), Stop(max_audio_s=5.0)
    with running_under(stop):
        assert espeak.synthesize("Short enough.").seconds < 5.0
        with pytest.raises(WireError, match="the answer may be at most 5 s") as info:
            espeak.synthesize(OVERLONG_TEXTS["CJK"])
    assert info.value.status == 400 and info.value.spent


def test_text_that_speaks_as_silence_is_the_callers_400_not_a_500():
    """Issue 37: fullwidth, circled and Arabic-Indic digits passed the 'something to speak' check and came out of
    espeak-ng as silence: '500 espeak-ng produced no audio', not refunded."""
    for text in (unit * 40 for unit in SILENT_UNITS.values()):
        with pytest.raises(WireError, match="reads as silence") as info:
            check_speakable(text[:400], 30.0)
        assert info.value.status == 400 and not info.value.spent
        with pytest.raises(WireError, match="speaks as silence"):
            EspeakSynthesizer().synthesize(text[:400])


def test_kokoro_stops_after_the_run_that_passes_the_audio_budget():
    from audionet.lib.services import TTS

    backend = TTS.load_backend("kokoro:", warmup=False)
    session, runs = backend.kokoro.sess, []
    real_run = session.session.run

    def counted(names, feeds, options=None):
        runs.append(1)
        return real_run(names, feeds, options)

    session.session.run = counted
    try:
        with running_under(Stop(max_audio_s=2.0)), pytest.raises(WireError, match="at most 2 s") as info:
            backend.synthesize("A first sentence that speaks for a while. " * 6)
    finally:
        session.session.run = real_run
    assert info.value.spent and len(runs) == 1  # stopped after its first run, not at the end of the text
