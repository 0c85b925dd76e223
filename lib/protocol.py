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
import struct
from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StringConstraints, ValidationError, field_validator

from lib.audio import Audio, decode_flac
from lib.errors import WireError

SERVICES = ("tts", "vc", "music")
Service = Literal["tts", "vc", "music"]

MAX_TEXT_CHARS = 400
MAX_SECONDS = {"tts": 30.0, "vc": 30.0, "music": 30.0}
MIN_MUSIC_SECONDS = 1.0
REFERENCE_SECONDS = (1.0, 20.0)
MAX_REFERENCE_FLAC_BYTES = 1_500_000
# Checked against Content-Length (and while streaming) before a byte is parsed.
MAX_REQUEST_BYTES = {"tts": 8_192, "vc": 8_192 + MAX_REFERENCE_FLAC_BYTES * 4 // 3 + 4, "music": 8_192}
MAX_RESPONSE_BYTES = 8_000_000
MAX_HEADER_BYTES = 16_384
RESPONSE_MAGIC = b"ANR1"
RESPONSE_CONTENT_TYPE = "application/x-audionet-response"
PROTOCOL_VERSION = 1

Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT_CHARS)]
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]
VoiceName = Annotated[str, StringConstraints(max_length=32, pattern=r"^[a-z0-9][a-z0-9_+\-]*$")]
Sha256Hex = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


def path_for(service: str) -> str:
    return f"/v1/{service}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def _printable(text: str) -> str:
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in text) or not text.strip():
        raise ValueError("must be non-blank printable text")
    return text


class TTSRequest(_Strict):
    service: Literal["tts"] = "tts"
    text: Text
    voice: Optional[VoiceName] = None
    seed: Seed = 0

    _text = field_validator("text")(_printable)


class VCRequest(_Strict):
    service: Literal["vc"] = "vc"
    text: Text
    reference_text: Text
    reference_flac_b64: Annotated[str, StringConstraints(min_length=8, max_length=MAX_REQUEST_BYTES["vc"])]
    seed: Seed = 0

    _text = field_validator("text", "reference_text")(_printable)
    _reference: Optional[Audio] = PrivateAttr(default=None)

    def reference(self) -> Audio:
        """The reference clip, decoded and checked like any audio from the wire
        (once: parse_request validates it and the backend reuses it)."""
        if self._reference is None:
            try:
                data = base64.b64decode(self.reference_flac_b64, validate=True)
            except (binascii.Error, ValueError):
                raise WireError("reference_flac_b64 is not valid base64") from None
            low, high = REFERENCE_SECONDS
            self._reference = decode_flac(data, max_seconds=high, min_seconds=low, max_bytes=MAX_REFERENCE_FLAC_BYTES)
        return self._reference


class MusicRequest(_Strict):
    service: Literal["music"] = "music"
    prompt: Text
    seconds: float = Field(ge=MIN_MUSIC_SECONDS, le=MAX_SECONDS["music"], allow_inf_nan=False)
    seed: Seed = 0

    _prompt = field_validator("prompt")(_printable)


Request = Union[TTSRequest, VCRequest, MusicRequest]
REQUEST_MODELS = {"tts": TTSRequest, "vc": VCRequest, "music": MusicRequest}


def one_line(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "body"
    extra = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"invalid request field '{where}': {first.get('msg', 'invalid')}{extra}"


def parse_request(service: str, body: bytes) -> Request:
    """Validate a request body for `service`; raises WireError with one line."""
    if service not in REQUEST_MODELS:
        raise WireError(f"unknown service {service!r}", status=404)
    if len(body) > MAX_REQUEST_BYTES[service]:
        raise WireError(f"request is {len(body)} bytes; the limit is {MAX_REQUEST_BYTES[service]}", status=413)
    try:
        request = REQUEST_MODELS[service].model_validate_json(body)
    except ValidationError as error:
        raise WireError(one_line(error)) from None
    if isinstance(request, VCRequest):
        request.reference()  # reject a bad clip before it is queued
    return request


def encode_request(request: Request) -> bytes:
    return request.model_dump_json(exclude_none=True).encode()


class ResponseMeta(_Strict):
    """What the miner says about the clip; signed together with the audio."""

    version: Literal[1] = PROTOCOL_VERSION
    service: Service
    model: Annotated[str, StringConstraints(max_length=128)]
    device: Annotated[str, StringConstraints(max_length=128)]
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
    try:
        meta = ResponseMeta.model_validate(json.loads(body[8 : 8 + header_len]))
    except (ValueError, ValidationError) as error:
        detail = one_line(error) if isinstance(error, ValidationError) else "header is not JSON"
        raise WireError(f"bad response metadata: {detail}") from None
    return meta, body[8 + header_len :]


def max_response_seconds(service: str) -> float:
    """Longest answer accepted: the service limit plus 10% and 1 s of slack."""
    return MAX_SECONDS[service] * 1.1 + 1.0


def decode_response_audio(service: str, flac: bytes) -> Audio:
    return decode_flac(flac, max_seconds=max_response_seconds(service), max_bytes=MAX_RESPONSE_BYTES)
