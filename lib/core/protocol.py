"""The wire protocol: request models, limits and the binary response body.

Requests are small JSON documents (pydantic v2, `extra="forbid"`, every field
capped). A response body is binary so audio does not pay base64's 33%:

    b"ANR1" | u32 big-endian header length | header JSON | 16-bit FLAC bytes

The header (`ResponseMeta`) and the FLAC both sit inside the body that the
miner signs, so every byte the validator trusts is covered by the signature.
The sample rate is read from the FLAC stream, never from the header.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
import unicodedata
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from audionet.lib.core.audio import Audio, decode_flac
from audionet.lib.core.errors import WireError

MAX_TEXT_CHARS = 400
REFERENCE_SECONDS = (1.0, 20.0)
MAX_REFERENCE_FLAC_BYTES = 1_500_000
# A request without audio in it: checked against Content-Length (and while streaming)
# before a byte is parsed. Services that carry audio declare a larger cap.
MAX_PLAIN_REQUEST_BYTES = 8_192
MAX_RESPONSE_BYTES = 8_000_000
MAX_HEADER_BYTES = 16_384
MAX_JSON_DEPTH = 32  # nesting of any JSON from the wire (ours is at most 5 deep); json.loads recurses per level
RESPONSE_MAGIC = b"ANR1"
RESPONSE_CONTENT_TYPE = "application/x-audionet-response"
PROTOCOL_VERSION = 1
# How long a miner keeps a kept-alive connection that sends no next request (`--miner.head_timeout`'s default). A
# client must stop reusing one well before: reused just as the miner closes it, a request is lost (httpx: ReadError).
IDLE_CONNECTION_S = 5.0
HEALTH_PATH = "/v1/health"  # GET: alive (unsigned), or queues, models and devices (signed)

Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]
# strict: a seed given as a string, a float or a boolean is refused, not converted
Seed = Annotated[int, Field(strict=True, ge=0, le=2**32 - 1)]
VoiceName = Annotated[str, StringConstraints(max_length=32, pattern=r"^[a-z0-9][a-z0-9_+\-]*$")]
ServiceName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


# A JSON string (escapes included; a possessive match, so no backtracking), a bracket, or a quote that opens no
# string (unterminated: the document is not JSON and its scan stops there).
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]|"', re.DOTALL)


def json_depth(data: bytes, limit: int) -> int:
    """How deep brackets nest in `data` outside JSON strings, counted up to just past `limit` (linear time)."""
    depth = deepest = 0
    for token in _JSON_TOKEN.finditer(data):
        first = token.group()[0]
        if first == 0x22:  # '"'
            if token.end() - token.start() == 1:
                break
        elif first in b"[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        else:
            depth -= 1
    return deepest


def parse_json(data: bytes, max_bytes: int, what: str) -> object:
    """JSON from the wire (a miner's error body, its health, an answer's header): at most `max_bytes` and
    MAX_JSON_DEPTH deep, checked before parsing, so no document can exhaust memory or the parser's recursion;
    WireError with one line naming `what` otherwise."""
    if len(data) > max_bytes:
        raise WireError(f"{what} is {len(data)} bytes; the limit is {max_bytes}")
    if json_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise WireError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # a decode error, bad UTF-8, an integer past Python's digit limit
        raise WireError(f"{what} is not JSON") from None


def path_for(service: str) -> str:
    return f"/v1/{service}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def printable(text: str) -> str:
    """A field validator: non-blank text without control characters (C0, DEL, C1; tabs and newlines allowed)."""
    if any(unicodedata.category(ch) == "Cc" and ch not in "\n\t" for ch in text) or not text.strip():
        raise ValueError("must be non-blank printable text")
    return text


def label(text: str) -> str:
    """A field validator: a name a miner reports (its model, its device) has only printable characters, so it
    can reach a log line or a verdict as it is."""
    if not text.isprintable():
        raise ValueError("must be printable (no control, format or separator characters)")
    return text


Label = Annotated[str, StringConstraints(max_length=128), AfterValidator(label)]


class ServiceRequest(_Strict):
    """What every request has: the service it is for (a Literal in each subclass) and a seed."""

    service: str
    seed: Seed = 0


def one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "body"
    extra = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"invalid request field '{where}': {first.get('msg', 'invalid')}{extra}"


def parse_body(model: type[ServiceRequest], body: bytes, max_bytes: int) -> ServiceRequest:
    """Validate a request body against `model`; raises WireError with one line."""
    if len(body) > max_bytes:
        raise WireError(f"request is {len(body)} bytes; the limit is {max_bytes}", status=413)
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        raise WireError(one_line(error)) from None


def encode_request(request: ServiceRequest) -> bytes:
    return request.model_dump_json(exclude_none=True).encode()


def decode_reference(flac_b64: str) -> Audio:
    """A reference clip carried in a request, decoded and checked like any audio from the wire."""
    try:
        data = base64.b64decode(flac_b64, validate=True)
    except (binascii.Error, ValueError):
        raise WireError("reference_flac_b64 is not valid base64") from None
    low, high = REFERENCE_SECONDS
    return decode_flac(data, max_seconds=high, min_seconds=low, max_bytes=MAX_REFERENCE_FLAC_BYTES)


class ResponseMeta(_Strict):
    """What the miner says about the clip; signed together with the audio."""

    version: Literal[1] = PROTOCOL_VERSION
    service: ServiceName
    model: Label
    device: Label
    generation_s: float = Field(ge=0.0, le=3600.0, allow_inf_nan=False)
    seed: Seed
    request_sha256: Sha256Hex


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack_response(meta: ResponseMeta, flac: bytes) -> bytes:
    header = meta.model_dump_json().encode()
    return RESPONSE_MAGIC + struct.pack(">I", len(header)) + header + flac


def unpack_response(body: bytes) -> tuple[ResponseMeta, bytes]:
    """Split a response body into its metadata and FLAC bytes (not yet decoded)."""
    if len(body) > MAX_RESPONSE_BYTES:
        raise WireError(f"response is {len(body)} bytes; the limit is {MAX_RESPONSE_BYTES}", status=413)
    if len(body) < 8 or not body.startswith(RESPONSE_MAGIC):
        raise WireError("response is not an audionet response body")
    (header_len,) = struct.unpack(">I", body[4:8])
    if header_len > MAX_HEADER_BYTES or 8 + header_len > len(body):
        raise WireError("response header length is out of range")
    header = parse_json(body[8 : 8 + header_len], MAX_HEADER_BYTES, "the response metadata")
    try:
        meta = ResponseMeta.model_validate(header)
    except ValidationError as error:
        raise WireError(f"bad response metadata: {one_line(error)}") from None
    return meta, body[8 + header_len :]


def answer_limit_seconds(max_seconds: float) -> float:
    """Longest answer accepted for a request that may ask for `max_seconds`: 10% and 1 s of slack."""
    return max_seconds * 1.1 + 1.0


# How long a text takes to say, at any plausible rate: the length a right answer has (the validator's length gate,
# lib/scoring/gates.py) and the length the miner plans a speech request for (`SpeechService`,
# lib/services/base.py), one rule.
SPEECH_SECONDS_PER_CHAR = (0.025, 0.2)  # plausible speaking rates (≈5-40 chars/s)
SPEECH_SLACK_S = 1.5


def speech_seconds(text: str) -> tuple[float, float]:
    """The (min, max) duration of `text` spoken at any plausible rate."""
    low, high = SPEECH_SECONDS_PER_CHAR
    return low * len(text), high * len(text) + SPEECH_SLACK_S


def decode_response_audio(flac: bytes, max_seconds: float) -> Audio:
    """A miner's FLAC answer, decoded and checked (`max_seconds`: the service's answer limit)."""
    return decode_flac(flac, max_seconds=max_seconds, max_bytes=MAX_RESPONSE_BYTES)


# --- /v1/health, signed: what a validator reads to decide what it asks a miner for -------------------------
class ReplicaHealth(_Strict):
    label: str  # the replica's device label in this pool (docs/development.md, glossary)
    device: str
    model: str
    parallel: int
    busy: int
    waiting: int
    served: int  # answers so far (the glossary's *answered*)
    failed: int
    abandoned: int
    refused: int
    longest_s: float
    s_per_audio_s: Optional[float]


class ServiceHealth(_Strict):
    model: str
    busy: int
    waiting: int
    served: int  # answers so far
    replicas: list[ReplicaHealth]


class DeviceHealth(_Strict):
    device: str
    busy: int
    waiting: int
    served: int
    failed: int
    abandoned: int
    refused: int


class CallerPlaces(_Strict):
    share: float  # of the stake of every caller the access policy admits
    connections: int
    parsing: int
    waiting: int
    generating: int


class UnverifiedPlaces(_Strict):
    connections: int
    addresses: int


class PlaceLimits(_Strict):
    connections: int
    unverified: int
    line: dict[str, int]  # per service


class Places(_Strict):
    callers: dict[str, CallerPlaces]
    unverified: UnverifiedPlaces
    limits: PlaceLimits


class HealthDetails(_Strict):
    """The signed /v1/health answer: the services served (the keys of `services`), queues, devices, places."""

    status: Literal["ok"]
    hotkey: str
    started_ns: int  # when the miner's process started: a request signed before it is refused
    services: dict[str, ServiceHealth]
    devices: dict[str, DeviceHealth]
    places: Places
