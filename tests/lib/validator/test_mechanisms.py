"""Which mechanism pays which service: one each when the subnet runs enough, all on one combined by a split,
an owner's explicit plan otherwise, and a plain error when the subnet cannot carry it."""

import numpy as np
import pytest

from audionet.lib.core.errors import ConfigError
from audionet.lib.validator.mechanisms import parse_mechanisms, parse_split, plan

SERVICES = ("tts", "vc", "music")


def test_one_mechanism_per_service_in_the_registrys_order():
    layout = plan(SERVICES, 3)
    assert layout.mechanism == {"tts": 0, "vc": 1, "music": 2} and layout.used == [0, 1, 2]
    weights = {"tts": np.array([0.0, 2.0]), "vc": np.array([1.0, 1.0])}
    assert layout.combine(weights, 0).tolist() == [0.0, 1.0] and layout.combine(weights, 1).tolist() == [0.5, 0.5]
    assert layout.combine(weights, 2).tolist() == []  # this validator scores no music


def test_one_mechanism_combines_services_by_the_split_and_a_silent_service_gives_its_share_away():
    layout = plan(SERVICES, 1, split={"tts": 2})
    weights = {"tts": np.array([1.0, 0.0, 0.0]), "vc": np.array([0.0, 1.0, 0.0]), "music": np.array([0.0, 0.0, 1.0])}
    assert layout.combine(weights, 0) == pytest.approx([0.5, 0.25, 0.25])
    weights["music"] = np.zeros(3)
    assert layout.combine(weights, 0) == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_fewer_mechanisms_than_services_need_an_explicit_plan():
    with pytest.raises(ConfigError, match="--neuron.mechanisms"):
        plan(SERVICES, 2)
    layout = plan(SERVICES, 2, explicit={"tts": 0, "vc": 0, "music": 1})
    assert layout.services_of(0) == ["tts", "vc"] and layout.services_of(1) == ["music"]
    with pytest.raises(ConfigError, match="mechanism 2 does not exist"):
        plan(SERVICES, 2, explicit={"tts": 0, "vc": 1, "music": 2})
    with pytest.raises(ConfigError, match="names no mechanism for music"):
        plan(SERVICES, 2, explicit={"tts": 0, "vc": 1})
    with pytest.raises(ConfigError, match="unknown service 'speech'"):
        plan(SERVICES, 3, split={"speech": 1})


def test_the_flags_parse():
    assert parse_mechanisms("auto") is None
    assert parse_mechanisms("tts:0, vc:0,music:1") == {"tts": 0, "vc": 0, "music": 1}
    assert parse_split("tts:1,music:2.5") == {"tts": 1.0, "music": 2.5}
    for bad, parse in (("tts", parse_mechanisms), ("tts:x", parse_mechanisms), ("tts:-1", parse_split)):
        with pytest.raises(ValueError):
            parse(bad)
