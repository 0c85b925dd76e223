"""The one parser of model specs, `scheme:rest` (`hf:facebook/musicgen-small`, `whisper:tiny.en`,
`kokoro:`): the generation factory (models/factory.py) and the evaluator table (models/eval/profiles.py)
both split with it. Specs come from flags, never from the wire."""

from __future__ import annotations

from audionet.lib.core.errors import BackendError


def split_spec(spec: str, what: str = "model") -> tuple[str, str]:
    """`scheme:rest` -> (scheme, rest); a spec without a colon is a scheme alone (`dnsmos`, `none`)."""
    scheme, _, rest = str(spec).strip().partition(":")
    if not scheme:
        raise BackendError(f"empty {what} spec {spec!r}")
    return scheme, rest
