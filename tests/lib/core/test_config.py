"""Flags: one spelling per flag family; an old spelling still works for a release, with one warning line."""

from __future__ import annotations

import pytest

from audionet.lib.core.config import CommaList, Parser, flag


def parser() -> Parser:
    built = Parser(prog="tool")
    flag(built, "neuron.eligible_after", old=("eligible-after",), type=int, default=1)
    return built


def test_the_new_spelling_sets_the_value_without_a_warning(capsys):
    assert parser().parse_args(["--neuron.eligible_after", "4"]).neuron_eligible_after == 4
    assert capsys.readouterr().err == ""


def test_an_old_spelling_sets_the_same_value_with_one_warning_line(capsys):
    args = parser().parse_args(["--eligible-after", "5"])
    assert args.neuron_eligible_after == 5
    err = capsys.readouterr().err
    assert err == "tool: warning: --eligible-after is deprecated, use --neuron.eligible_after\n"


def test_an_old_spelling_is_checked_like_the_new_one_and_hidden_from_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        parser().parse_args(["--eligible-after", "many"])
    assert exit_info.value.code == 2 and "invalid int value: 'many'" in capsys.readouterr().err
    assert "--eligible-after" not in parser().format_help() and "--neuron.eligible_after" in parser().format_help()


def test_the_localnet_and_generation_study_keep_their_old_spellings(capsys):
    from audionet.neurons.localnet import build_parser

    assert build_parser().parse_args(["--eligible-after", "2"]).neuron_eligible_after == 2
    assert "--eligible-after is deprecated" in capsys.readouterr().err


def test_comma_lists_drop_repeats_and_check_their_values():
    services = CommaList(allowed=("tts", "vc"), what="service")
    assert services("tts, vc,tts") == ("tts", "vc")
    with pytest.raises(Exception, match="unknown service music"):
        services("tts,music")
