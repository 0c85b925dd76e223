"""Settings stated once: every `Settings` class generates its own parser, whose defaults are its fields' defaults
and read back into the same settings; no flag a setting carries is defined anywhere else in the source; the miner's
parser is built from its settings (less the families not yet converted, named here)."""

from __future__ import annotations

import ast
from dataclasses import MISSING, fields
from pathlib import Path

from audionet.lib.core.config import FLAG, Parser, Settings, dest
from audionet.lib.miner.settings import build_parser
from audionet.lib.services import registry
from audionet.lib.validator.settings import ValidatorSettings  # noqa: F401 (a Settings class the tests find)

REPO = Path(__file__).resolve().parent.parent
# Flag families of the miner's command line still defined the older way (`flag(...)` beside a reader).
NOT_YET_SETTINGS = (
    "netuid",
    "subtensor.",
    "wallet.",
    "logging.",
    "services",
    "wandb.",
    "telemetry.",
    "tts.",
    "vc.",
    "music.",
)


def settings_classes() -> list[type]:
    found, todo = [], list(Settings.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return sorted((c for c in found if c.__module__.startswith("audionet.")), key=lambda c: c.__qualname__)


def flag_names(cls) -> list[str]:
    names = []
    for item in cls.settings_fields():
        spec = item.metadata[FLAG]
        names += (
            [f"{spec['name']}.{s.name}" for s in registry.all_services()] if spec["per_service"] else [spec["name"]]
        )
    return names


def test_every_settings_class_generates_its_parser_and_reads_its_own_defaults_back():
    classes = settings_classes()
    assert {c.__name__ for c in classes} >= {
        "AxonSettings",
        "MinerSettings",
        "GuardSettings",
        "PoolSettings",
        "ValidatorSettings",
    }
    for cls in classes:
        parser = Parser(prog="test")
        cls.add_flags(parser, services=registry.all_services())
        # a field that is no flag and has no default (the validator's state folder) is given as a value
        given = {f.name: "given" for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        read = cls.from_flags(parser.parse_args([]), **given)
        default = cls(**given)
        for item in fields(cls):
            spec = item.metadata.get(FLAG)
            if spec and spec["per_service"]:
                expected = {
                    s.name: getattr(s, spec["per_service"]) if isinstance(spec["per_service"], str) else spec["default"]
                    for s in registry.all_services()
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
    carried = {name for cls in settings_classes() for name in flag_names(cls)}
    twice = [
        f"{path.relative_to(REPO)}: --{name}"
        for folder in ("lib", "neurons", "benchmarks", "scripts")
        for path in sorted((REPO / folder).rglob("*.py"))
        for name in defined_flags(path)
        if name in carried
    ]
    assert twice == []


def test_the_miner_parser_is_its_settings_and_the_families_not_yet_converted():
    carried = {dest(name) for cls in settings_classes() for name in flag_names(cls)}
    parser = build_parser()
    by_hand = [
        action.option_strings[0]
        for action in parser._actions
        if action.option_strings and action.dest != "help" and action.dest not in carried
    ]
    assert [name for name in by_hand if not name.removeprefix("--").startswith(NOT_YET_SETTINGS)] == []


def test_settings_written_as_flags_parse_back_into_the_same_settings():
    from audionet.lib.miner.settings import AxonSettings, MinerSettings

    axon = AxonSettings(ip="127.0.0.1", port=9000, no_publish=True)
    miner = MinerSettings(sync_interval=2.5, max_waiting=3, timeouts={s.name: 7.5 for s in registry.all_services()})
    args = build_parser().parse_args(["--netuid", "1", *axon.as_flags(), *miner.as_flags()])
    assert (AxonSettings.from_flags(args), MinerSettings.from_flags(args)) == (axon, miner)
    assert AxonSettings().as_flags() == []  # defaults are not written out
