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


def test_settings_generate_their_flags_and_read_them_back_with_one_default_each():
    from dataclasses import dataclass
    from types import SimpleNamespace

    from audionet.lib.core.config import Settings, positive_int, setting

    @dataclass(frozen=True)
    class Toy(Settings):
        """toy settings"""

        port: int = setting("toy.port", 8091, type=int, help="port to bind")
        quiet: bool = setting("toy.quiet", False, action="store_true", help="say less")
        count: int = setting("toy.count", 2, type=positive_int, help="how many")
        timeouts: dict = setting("toy.timeout", per_service="timeout_s", type=float, help="{title}: seconds")
        name: str = "toy"  # no flag: set by whoever builds it

    services = [SimpleNamespace(name="tts", title="Speech", timeout_s=12.0)]
    built = Parser(prog="tool")
    Toy.add_flags(built, services=services, count=None)  # this parser has no default count
    assert Toy.from_flags(built.parse_args([])) == Toy(count=None, timeouts={"tts": 12.0})
    args = built.parse_args(["--toy.port", "1", "--toy.quiet", "--toy.count", "3", "--toy.timeout.tts", "4"])
    assert Toy.from_flags(args, name="other") == Toy(1, True, 3, {"tts": 4.0}, "other")
    assert "toy settings" in built.format_help() and "Speech: seconds" in built.format_help()
    with pytest.raises(SystemExit):
        built.parse_args(["--toy.count", "0"])
    partial = Parser(prog="tool")
    flag(partial, "toy.port", type=int, default=5)
    assert Toy.from_flags(partial.parse_args([])) == Toy(port=5)  # flags it lacks keep their defaults
    Toy.add_flags(partial := Parser(prog="tool"), skip=("port", "quiet"))
    assert "--toy.port" not in partial.format_help() and Toy.from_flags(partial.parse_args([])) == Toy()
