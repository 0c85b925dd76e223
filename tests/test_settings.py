"""Settings stated once: every `Settings` class generates its own parser, whose defaults are its fields' defaults
and read back into the same settings; no flag a setting carries is defined anywhere else in the source; every
production parser (miner, validator, check, score, localnet) is built from settings alone, and each of its flags
defaults to its field's default (or to the one default its parser states instead)."""

from __future__ import annotations

import ast
from dataclasses import MISSING, fields
from pathlib import Path

import pytest

from audionet.lib.core.config import FLAG, Parser, Settings, dest, service_flag
from audionet.lib.miner.settings import ServingSettings, build_parser
from audionet.lib.services import registry
from audionet.lib.services.registry import BackendSettings, ModelChoice
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
# A default a parser states instead of its field's (`add_flags(..., <field>=default)`): localnet's backend flags
# override the roster's choice, so none is given unless the operator gives one.
PARSER_DEFAULTS = {"localnet": {f"{service.name}.model": None for service in registry.all_services()}}
# A value for each required flag, so a parser can parse an otherwise empty command line.
REQUIRED = {"service": "tts", "text": "Hello.", "netuid": "1"}
# The shortest command line each production parser parses.
ARGV = {
    "miner": ["--netuid", "1"],
    "check": ["--netuid", "1"],
    "validator": ["--netuid", "1"],
    "score": ["--service", "tts", "--text", "Hello.", "clip.wav"],
}


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
            found[service_flag(spec["name"], key.name)] = (
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
        "BackendSettings",
        "ServingSettings",
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
    assert [action.option_strings[0] for action in actions.values() if action.dest not in carried] == []
    # the classes this parser is built from: those whose every flag it has (localnet's --neuron.eligible_after
    # is its own setting, with its own default, not the validator's)
    checked = set()
    for cls in settings_classes():
        defaults = {dest(name): default for name, default in flag_defaults(cls).items()}
        if defaults and set(defaults) <= set(actions):
            for key, default in defaults.items():
                assert actions[key].default == default, (role, cls.__name__, key)
                checked.add(key)
    for name, default in PARSER_DEFAULTS.get(role, {}).items():
        assert actions[dest(name)].default == default, (role, name)
        checked.add(dest(name))
    assert checked == set(actions)  # every flag was checked


def test_settings_written_as_flags_parse_back_into_the_same_settings():
    from audionet.lib.miner.settings import AxonSettings, MinerSettings

    axon = AxonSettings(ip="127.0.0.1", port=9000, no_publish=True)
    miner = MinerSettings(sync_interval=2.5, max_waiting=3, timeouts={s.name: 7.5 for s in registry.all_services()})
    args = build_parser().parse_args(["--netuid", "1", *axon.as_flags(), *miner.as_flags()])
    assert (AxonSettings.from_flags(args), MinerSettings.from_flags(args)) == (axon, miner)
    assert AxonSettings().as_flags() == []  # defaults are not written out


def test_each_per_service_setting_reads_back_only_its_own_flags_from_every_production_parser():
    # a per-service flag is found in the namespace by its name's pattern (`--miner.timeout.<service>`,
    # `--<service>.model`): no other flag of any production parser may look like one
    for role, build in PARSERS.items():
        args = build().parse_args(ARGV.get(role, []))
        for cls in settings_classes():
            for item in cls.settings_fields():
                if item.metadata[FLAG]["per_service"]:
                    read = getattr(
                        cls.from_flags(args, **{f.name: "" for f in fields(cls) if FLAG not in f.metadata}), item.name
                    )
                    keys = {key.name for key in cls.flag_keys(registry.all_services())}
                    assert set(read) <= keys, (role, cls.__name__, item.name, sorted(read))


def test_backend_flags_parse_into_their_fields_with_each_service_default_stated_by_its_service():
    args = build_parser().parse_args(["--netuid", "1", "--vc.model", "py:my.cloner", "--music.preset", "fast"])
    backends = BackendSettings.from_flags(args)
    assert backends.models == {
        service.name: "py:my.cloner" if service.name == "vc" else service.default_backend
        for service in registry.all_services()
    }
    assert backends.presets == {s.name: "fast" if s.name == "music" else "balanced" for s in registry.all_services()}
    assert backends.choices(("vc", "music")) == {
        "vc": ModelChoice("py:my.cloner", "balanced"),
        "music": ModelChoice(registry.get("music").default_backend, "fast"),
    }
    with pytest.raises(SystemExit):  # a preset outside the three is refused when parsed
        build_parser().parse_args(["--netuid", "1", "--tts.preset", "fastest"])


def test_a_service_registered_later_gets_its_backend_flags_by_its_own_name_and_default():
    from types import SimpleNamespace

    note = SimpleNamespace(name="voice_note", title="Voice note", default_backend="baseline:note")
    parser = Parser(prog="test")
    BackendSettings.add_flags(parser, services=[note])
    helps = {action.option_strings[0]: action.help for action in parser._actions}
    assert helps["--voice_note.model"] == "Voice note backend spec (default baseline:note)"
    read = BackendSettings.from_flags(parser.parse_args(["--voice_note.preset", "quality"]))
    assert (read.models, read.presets) == ({"voice_note": "baseline:note"}, {"voice_note": "quality"})


def test_localnet_backend_flags_leave_the_roster_to_choose_unless_given_and_write_back_as_miner_flags():
    parser = localnet.build_parser()
    helps = {action.option_strings[0]: action.help for action in parser._actions}
    assert helps["--vc.model"] == "Voice Clone backend spec (default by the miner's place in the roster)"
    assert "--tts.preset" not in helps
    overrides = BackendSettings.from_flags(parser.parse_args(["--tts.model", "kokoro:"])).specs(registry.names())
    assert overrides == {s.name: "kokoro:" if s.name == "tts" else None for s in registry.all_services()}
    # what LocalNet.add_miner writes: only the models given, as the miner parses them
    written = BackendSettings(models={"tts": "kokoro:"})
    assert written.as_flags() == ["--tts.model", "kokoro:"]
    read = BackendSettings.from_flags(build_parser().parse_args(["--netuid", "1", *written.as_flags()]))
    assert read.models["tts"] == "kokoro:"


def test_the_miners_services_default_to_every_registered_one_and_parse_as_a_checked_list():
    parse = build_parser().parse_args
    assert ServingSettings.from_flags(parse(["--netuid", "1"])).services == registry.names()
    assert ServingSettings.from_flags(parse(["--netuid", "1", "--services", "music, tts,music"])).services == (
        "music",
        "tts",
    )
    with pytest.raises(SystemExit):
        parse(["--netuid", "1", "--services", "tts,karaoke"])
