"""Command-line flags in the bittensor style (`--wallet.name`, `--axon.port`, ...) and settings stated once.

Dotted flags land on the namespace with dots turned into underscores
(`--wallet.name` -> `args.wallet_name`). A `Settings` class's typed fields (`setting`) carry each flag's name,
default and help; its flags and their reader are generated from them. The flags every neuron shares (chain,
wallet) and its entry point: `lib/core/neuron.py`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import MISSING, field, fields
from typing import Any, Optional


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors ("prog: error: ... (see --help)"), for every entry point."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


class OldSpelling(argparse.Action):
    """A flag's previous spelling, kept for one release: it sets the same value, with one warning line."""

    def __init__(self, option_strings, dest, *, spelling: str, **kwargs):
        self.spelling = spelling
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.spelling}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, name: str, *, old: tuple[str, ...] = (), **kwargs
) -> None:
    """`--name` (dots and dashes become underscores in `args`); `old` spellings of a valued flag still work,
    each with a deprecation warning."""
    parser.add_argument(f"--{name}", dest=dest(name), **kwargs)
    if old:
        parser.add_argument(
            *(f"--{spelling}" for spelling in old),
            dest=dest(name),
            action=OldSpelling,
            spelling=f"--{name}",
            type=kwargs.get("type"),
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


# Settings stated once: a typed dataclass field carries its flag's name, default and help (`setting`), and the
# argparse flags and the reader are generated from the fields (`Settings.add_flags`, `Settings.from_flags`).
FLAG = "audionet.flag"  # the field metadata key: the flag a field is read from


def setting(
    name: str,
    default: Any = None,
    *,
    help: str,
    per_service: str | bool = False,
    default_factory: Any = None,
    **options,
) -> Any:
    """A settings field that is also the flag `--name` (`type`, `choices`, `action` and `old` go to `flag`).
    `per_service`: one flag `--name.<service>` per service instead (`--<service>.model` where `name` holds
    `{service}`), defaulting to `default` (True) or to that service's attribute of this name; the field is then
    {service: value}, `default_factory()` (else {}) when built without flags. `default_factory` on a plain
    field: a default known only at run time (the registered services), which is also the flag's."""
    spec = {"name": name, "default": default, "help": help, "per_service": per_service, "options": options}
    if per_service or default_factory is not None:
        return field(default_factory=default_factory or dict, metadata={FLAG: spec})
    if isinstance(default, (list, dict, set)):
        raise TypeError(f"--{name}: a mutable default; use a tuple")
    return field(default=default, metadata={FLAG: spec})


def dest(name: str) -> str:
    """Where argparse puts `--name`: dots and dashes become underscores."""
    return name.replace(".", "_").replace("-", "_")


def service_flag(name: str, service: str) -> str:
    """A per-service setting's flag for `service`: `name` with `{service}` filled in, else `name.<service>`."""
    return name.format(service=service) if "{service}" in name else f"{name}.{service}"


def service_dests(name: str) -> re.Pattern:
    """Where argparse puts a per-service setting's flags: the service is the match's one group."""
    before, _, after = dest(service_flag(name, "<service>")).partition("<service>")
    return re.compile(f"{re.escape(before)}([a-z_][a-z0-9_]*){re.escape(after)}")


class Settings:
    """A frozen dataclass of `setting` fields: its flags and their reader, generated from the fields."""

    @classmethod
    def settings_fields(cls):
        return [f for f in fields(cls) if FLAG in f.metadata]  # type: ignore[arg-type]

    @classmethod
    def flag_keys(cls, services: Sequence) -> Sequence:
        """Who gets a per-service flag: the services the parser serves (a family keyed by something else, the
        evaluator kinds, says so here)."""
        return services

    @classmethod
    def field_default(cls, item) -> Any:
        """A field's default (a `default_factory` one made now): the default of its flag."""
        return item.default_factory() if item.default is MISSING else item.default

    @classmethod
    def add_flags(
        cls,
        parser,
        title: Optional[str] = None,
        services: Sequence = (),
        skip: Sequence[str] = (),
        shown: Optional[dict[str, str]] = None,
        **defaults,
    ) -> None:
        """One flag per field, in a group titled `title` (else the class's first docstring line); `services`
        (objects with `name`, `title` and the per-service attributes): who gets a per-service flag; `skip`: fields
        this parser has no flag for (they keep their defaults); `defaults`: another default for this parser (a
        per-service field: for every service), and `shown`: how its help (`{default}`) says so."""
        shown = shown or {}
        group = parser.add_argument_group(title or (cls.__doc__ or cls.__name__).strip().splitlines()[0])
        for item in cls.settings_fields():
            spec = item.metadata[FLAG]
            if item.name in skip:
                continue
            if spec["per_service"]:
                attribute = spec["per_service"]
                for service in cls.flag_keys(services):
                    default = getattr(service, attribute) if isinstance(attribute, str) else spec["default"]
                    default = defaults.get(item.name, default)
                    flag(
                        group,
                        service_flag(spec["name"], service.name),
                        default=default,
                        help=spec["help"].format(title=service.title, default=shown.get(item.name, default)),
                        **spec["options"],
                    )
            elif spec["options"].get("action") in ("store_true", "store_false"):
                flag(group, spec["name"], help=spec["help"], **spec["options"])
            else:
                flag(
                    group,
                    spec["name"],
                    default=defaults.get(item.name, cls.field_default(item)),
                    help=spec["help"],
                    **spec["options"],
                )

    @classmethod
    def from_flags(cls, args, **values):
        """The settings from parsed flags (a per-service field: every `--name.<service>` the parser has); `values`
        set fields (flags or not) to what the caller worked out. A flag this parser does not have leaves its field
        at the default."""
        read, parsed = {}, vars(args)
        plain = {dest(f.metadata[FLAG]["name"]) for f in cls.settings_fields() if not f.metadata[FLAG]["per_service"]}
        for item in cls.settings_fields():
            spec = item.metadata[FLAG]
            key = dest(spec["name"])
            if spec["per_service"]:
                pattern = service_dests(spec["name"])
                read[item.name] = {
                    match[1]: v
                    for k, v in parsed.items()
                    if (match := pattern.fullmatch(k)) and k not in plain  # --eval.profile is no --eval.<kind>
                }
            elif key in parsed:
                read[item.name] = parsed[key]
        return cls(**{**read, **values})

    def as_flags(self) -> list[str]:
        """The command line that parses back into these settings: each field that differs from its default
        (every per-service value), as `from_flags` reads it. The localnet starts its miners with this."""
        argv = []
        for item in self.settings_fields():
            spec, value = item.metadata[FLAG], getattr(self, item.name)
            if spec["per_service"]:
                argv += [  # None: no value given (an --eval.<kind> left to the profile)
                    arg
                    for service, v in value.items()
                    if v is not None
                    for arg in (f"--{service_flag(spec['name'], service)}", flag_text(v))
                ]
            elif value == self.field_default(item):
                continue
            elif spec["options"].get("action") == "store_true":
                argv.append(f"--{spec['name']}")
            else:
                argv += [f"--{spec['name']}", flag_text(value)]
        return argv


def flag_text(value: Any) -> str:
    """A value as a flag's text: a tuple as a comma list, a float as its shortest exact form."""
    if isinstance(value, tuple):
        return ",".join(flag_text(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def split_list(text: str) -> list[str]:
    """ "a, b,,a" -> ["a", "b", "a"]: the one splitter of comma lists (flags, device lists, spec lists)."""
    return [part.strip() for part in str(text).split(",") if part.strip()]


class CommaList:
    """argparse type for comma-separated values: "a, b,a" -> ("a", "b") (order kept, repeats dropped
    unless `repeats`: one count per device keeps them).

    `allowed` (a collection, or a callable returning one when the flag is parsed) limits the
    values; `convert` turns each one into its type (int for counts); `empty` accepts "".
    The one comma-list flag type: services, parallel counts, presets, TTS specs, slowdowns.
    """

    def __init__(self, allowed=None, *, convert=str, empty: bool = False, repeats: bool = False, what: str = "value"):
        self.allowed, self.convert, self.empty, self.repeats, self.what = allowed, convert, empty, repeats, what

    def __call__(self, text: str) -> tuple:
        items = tuple(split_list(text) if self.repeats else dict.fromkeys(split_list(text)))
        if not items and not self.empty:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list of {self.what}s, got {text!r}")
        allowed = self.allowed() if callable(self.allowed) else self.allowed
        unknown = [item for item in items if allowed is not None and item not in allowed]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown {self.what} {', '.join(unknown)}; choose from {', '.join(allowed)}"
            )
        try:
            return tuple(self.convert(item) for item in items)
        except (ValueError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {self.what}s") from None


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value
