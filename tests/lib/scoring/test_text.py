import pytest

from audionet.lib.prompts.spoken import normalise_for_wer, number_words
from audionet.lib.scoring.text import word_error_rate


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
    assert normalise_for_wer("At 7 O'Clock, 12.5% & more!") == "at seven oclock twelve point five percent and more"
    assert word_error_rate("Meet me at 7 o'clock.", "meet me at seven oclock") == 0.0
    assert word_error_rate("It costs $3.50 at 7:05.", "It costs three dollars fifty cents at seven oh five") == 0.0
    assert word_error_rate("one two three four", "one two three") == 0.25
    assert word_error_rate("one two", "") == 1.0
    assert word_error_rate("short", "a b c d e f") == 1.0  # capped
