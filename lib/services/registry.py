"""The registry of services: what miner, validator, localnet, score and bench iterate.

The built-in services register themselves when `audionet.lib.services` is imported;
an operator's or a test's own service is one `register(MyService())` away.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Optional

from audionet.lib.core.config import CommaList, Settings, setting
from audionet.lib.core.errors import WireError
from audionet.lib.core.protocol import ServiceRequest
from audionet.lib.services.base import Service

_SERVICES: dict[str, Service] = {}


def register(service: Service) -> Service:
    if not service.name.isidentifier() or service.name != service.name.lower():
        raise ValueError(f"service name {service.name!r} must be a lower-case identifier")
    if service.name in _SERVICES and _SERVICES[service.name] is not service:
        raise ValueError(f"a service named {service.name!r} is already registered")
    _SERVICES[service.name] = service
    return service


def unregister(name: str) -> None:
    _SERVICES.pop(name, None)


@contextmanager
def registered(service: Service) -> Iterator[Service]:
    """`service` is registered inside the block only (tests, one-off tools)."""
    register(service)
    try:
        yield service
    finally:
        unregister(service.name)


def names() -> tuple[str, ...]:
    return tuple(_SERVICES)


def all_services() -> tuple[Service, ...]:
    return tuple(_SERVICES.values())


def get(name: str) -> Service:
    """The service called `name`; KeyError with the known names when there is none."""
    try:
        return _SERVICES[name]
    except KeyError:
        raise KeyError(f"unknown service {name!r}; known: {', '.join(_SERVICES)}") from None


# argparse type: a comma-separated subset of the registered services (checked when parsed,
# so a service registered after the parser was built is known).
service_list = CommaList(allowed=names, what="service")


PRESET_NAMES = ("fast", "balanced", "quality")


@dataclass(frozen=True)
class ModelChoice:
    """A service's backend as --<service>.model and --<service>.preset choose it."""

    spec: str
    preset: Optional[str] = None


@dataclass(frozen=True)
class BackendSettings(Settings):
    """models (one backend spec per service)"""

    models: dict[str, Optional[str]] = setting(
        "{service}.model", per_service="default_backend", help="{title} backend spec (default {default})"
    )
    presets: dict[str, str] = setting(
        "{service}.preset",
        "balanced",
        per_service=True,
        choices=PRESET_NAMES,
        help="speed/quality preset of backends that have one (hf:musicgen: small/medium/large; diffusion music: "
        "step counts, and --music.model preset picks the family; "
        "kokoro-clone: nearest voice / blend + pitch match / best of 3)",
    )

    def choices(self, chosen) -> dict[str, ModelChoice]:
        """{service: ModelChoice} for the `chosen` services (no preset where the parser has no preset flags)."""
        return {name: ModelChoice(self.models[name], self.presets.get(name)) for name in chosen}

    def specs(self, chosen) -> dict[str, Optional[str]]:
        """{service: spec} for the `chosen` services."""
        return {name: self.models[name] for name in chosen}


def sources_from_flags(args, chosen, *, real_network: bool = False) -> dict:
    """{service: what its `draw` needs} for the `chosen` services, from their own flags (entry points only)."""
    return {
        name: _SERVICES[name].open_sources(_SERVICES[name].source_settings(args), real_network=real_network)
        for name in chosen
    }


def parse_request(name: str, body: bytes) -> ServiceRequest:
    """A request body for the service `name` (WireError 404 when there is no such service)."""
    if name not in _SERVICES:
        raise WireError(f"unknown service {name!r}", status=404)
    return _SERVICES[name].parse(body)
