import pytest

from audionet.lib.prompts.spoken import number_words
from audionet.lib.scoring.rewards import f0_match, speech_likeness
from audionet.lib.scoring.text import normalise_text, word_error_rate


@pytest.mark.parametrize(
    "n, words",
    [
        (0, "zero"),
        (7, "seven"),
        (42, "forty two"),
        (100, "one hundred"),
        (2345, "two thousand three hundred forty five"),
    ],
)
def test_number_words(n, words):
    assert number_words(n) == words


def test_normaliser_makes_digits_case_and_punctuation_agree():
    assert normalise_text("At 7 O'Clock, 12.5% & more!") == "at seven oclock twelve point five percent and more"
    assert word_error_rate("Meet me at 7 o'clock.", "meet me at seven oclock") == 0.0
    assert word_error_rate("It costs $3.50 at 7:05.", "It costs three dollars fifty cents at seven oh five") == 0.0
    assert word_error_rate("one two three four", "one two three") == 0.25
    assert word_error_rate("one two", "") == 1.0
    assert word_error_rate("short", "a b c d e f") == 1.0  # capped


def test_pitch_and_speech_likeness_components():
    assert f0_match((200.0, 0.2), (200.0, 0.2)) == pytest.approx(1.0)
    assert f0_match((200.0, 0.2), (100.0, 0.2)) == pytest.approx(0.3)  # an octave off: pitch part is 0
    assert speech_likeness(0.96, "you", 6.0) < 0.2  # sustained pad: VAD says speech, ASR hears nothing
    assert speech_likeness(0.96, "it is never too late to learn something new", 4.0) > 0.9
