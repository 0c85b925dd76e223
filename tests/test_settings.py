"""Settings stated once: every `Settings` class generates its own parser, whose defaults are its fields' defaults
and read back into the same settings; no flag a setting carries is defined anywhere else in the source; every
production parser (miner, validator, check, score, localnet) is built from settings (less the families not yet
converted, named here), and each of its flags defaults to its field's default."""

from __future__ import annotations

import ast
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from audionet.lib.core.config import FLAG, Parser, Settings, dest
from audionet.lib.miner.settings import build_parser
from audionet.lib.services import registry
from audionet.lib.validator.check import CheckSettings  # noqa: F401 (the parsers import these when built)
from audionet.models.eval.profiles import EvalSettings  # noqa: F401
from audionet.neurons import check, localnet, references, score, validator  # noqa: F401 (references: its settings)

# Every production parser; importing their modules defines every Settings class the tests find.
PARSERS = {
    "miner": build_parser,
    "validator": validator.build_parser,
    "check": check.build_parser,
    "score": score.build_parser,
    "localnet": localnet.build_parser,
}

REPO = Path(__file__).resolve().parent.parent
# Flag families still defined the older way (`flag(...)` beside a reader): the miner's --services, and the
# per-service backend flags (--tts.model, --vc.preset, ...).
NOT_YET_SETTINGS = (
    "services",
    "tts.",
    "vc.model",
    "vc.preset",
    "music.",
)
# A value for each required flag, so a parser can parse an otherwise empty command line.
REQUIRED = {"service": "tts", "text": "Hello.", "netuid": "1"}


def settings_classes() -> list[type]:
    found, todo = [], list(Settings.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return sorted((c for c in found if c.__module__.startswith("audionet.")), key=lambda c: c.__qualname__)


def flag_defaults(cls) -> dict[str, object]:
    """Every flag the class carries -> the default its field states (per service: the service's attribute)."""
    found = {}
    for item in cls.settings_fields():
        spec = item.metadata[FLAG]
        if not spec["per_service"]:
            found[spec["name"]] = cls.field_default(item)
            continue
        for key in cls.flag_keys(registry.all_services()):
            attribute = spec["per_service"]
            found[f"{spec['name']}.{key.name}"] = (
                getattr(key, attribute) if isinstance(attribute, str) else spec["default"]
            )
    return found


def flag_names(cls) -> list[str]:
    return list(flag_defaults(cls))


def test_every_settings_class_generates_its_parser_and_reads_its_own_defaults_back():
    classes = settings_classes()
    assert {c.__name__ for c in classes} >= {
        "AxonSettings",
        "MinerSettings",
        "GuardSettings",
        "PoolSettings",
        "ValidatorSettings",
        "CheckSettings",
        "EvalSettings",
        "TelemetrySettings",
        "WandbSettings",
        "VerdictLog",
        "ReferenceSettings",
        "ScoreSettings",
        "LocalnetSettings",
        "FetchSettings",
        "ChainSettings",
    }
    for cls in classes:
        parser = Parser(prog="test")
        cls.add_flags(parser, services=registry.all_services())
        # a field that is no flag and has no default (the verdict log's telemetry) is given as a value
        given = {f.name: "given" for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        required = {
            f.name: f.metadata[FLAG]["name"] for f in cls.settings_fields() if "required" in f.metadata[FLAG]["options"]
        }
        options = {f.name: f.metadata[FLAG]["options"] for f in cls.settings_fields()}
        given |= {name: options[name].get("type", str)(REQUIRED[flag]) for name, flag in required.items()}
        argv = [arg for flag in required.values() for arg in (f"--{flag}", REQUIRED[flag])]
        read = cls.from_flags(parser.parse_args(argv), **given)
        default = cls(**given)
        for item in fields(cls):
            spec = item.metadata.get(FLAG)
            if spec and spec["per_service"]:
                expected = {
                    s.name: getattr(s, spec["per_service"]) if isinstance(spec["per_service"], str) else spec["default"]
                    for s in cls.flag_keys(registry.all_services())
                }
                expected = {k: v for k, v in expected.items() if v is not None or cls.__name__ != "PoolSettings"}
                assert getattr(read, item.name) == expected, (cls.__name__, item.name)
            else:
                assert getattr(read, item.name) == getattr(default, item.name), (cls.__name__, item.name)


def defined_flags(path: Path) -> list[str]:
    """Flag names a source file defines by hand: `flag(group, "name", ...)` and `add_argument("--name", ...)`."""
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if called == "flag" and strings:
                names.append(strings[0])
            elif called == "add_argument":
                names += [s.removeprefix("--") for s in strings if s.startswith("--")]
    return names


def test_no_flag_a_setting_carries_is_defined_anywhere_else():
    # a dotted flag names one setting of one family everywhere; a plain one (--seed, --rounds, --json) is each
    # tool's own (localnet's --rounds are validator rounds, a study's are its own)
    carried = {name for cls in settings_classes() for name in flag_names(cls) if "." in name}
    twice = [
        f"{path.relative_to(REPO)}: --{name}"
        for folder in ("lib", "neurons", "benchmarks", "scripts")
        for path in sorted((REPO / folder).rglob("*.py"))
        for name in defined_flags(path)
        if name in carried
    ]
    assert twice == []


@pytest.mark.parametrize("role", sorted(PARSERS))
def test_each_production_parser_is_settings_and_each_flag_defaults_to_its_field(role):
    carried = {dest(name) for cls in settings_classes() for name in flag_names(cls)}
    parser = PARSERS[role]()
    actions = {  # an old spelling (OldSpelling) shares its flag's dest: the flag comes first
        action.dest: action for action in reversed(parser._actions) if action.option_strings and action.dest != "help"
    }
    by_hand = [action.option_strings[0] for action in actions.values() if action.dest not in carried]
    assert [name for name in by_hand if not name.removeprefix("--").startswith(NOT_YET_SETTINGS)] == []
    # the classes this parser is built from: those whose every flag it has (localnet's --neuron.eligible_after
    # is its own setting, with its own default, not the validator's)
    checked = 0
    for cls in settings_classes():
        defaults = {dest(name): default for name, default in flag_defaults(cls).items()}
        if defaults and set(defaults) <= set(actions):
            for key, default in defaults.items():
                assert actions[key].default == default, (role, cls.__name__, key)
                checked += 1
    assert checked >= len(actions) - len(by_hand)  # every flag a setting carries was checked


def test_settings_written_as_flags_parse_back_into_the_same_settings():
    from audionet.lib.miner.settings import AxonSettings, MinerSettings

    axon = AxonSettings(ip="127.0.0.1", port=9000, no_publish=True)
    miner = MinerSettings(sync_interval=2.5, max_waiting=3, timeouts={s.name: 7.5 for s in registry.all_services()})
    args = build_parser().parse_args(["--netuid", "1", *axon.as_flags(), *miner.as_flags()])
    assert (AxonSettings.from_flags(args), MinerSettings.from_flags(args)) == (axon, miner)
    assert AxonSettings().as_flags() == []  # defaults are not written out
