"""Just enough of the protocol-buffer wire format to read the few messages the shipped models
keep their metadata in (a TensorFlow checkpoint's BundleEntryProto, an ONNX graph's initializers),
so reading them needs neither TensorFlow nor the onnx package.

`fields(buffer)` returns each field number's values in order: ints for varint and fixed-width
fields, bytes for length-delimited ones (strings, bytes, nested messages, packed arrays).
"""

from __future__ import annotations

import struct
from collections import defaultdict

from audionet.lib.core.errors import BackendError

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


def varint(buffer: bytes, position: int) -> tuple[int, int]:
    """(value, position after it) of the base-128 varint at `position`."""
    value, shift = 0, 0
    while True:
        if position >= len(buffer) or shift > 63:
            raise BackendError("corrupt protocol buffer: a varint runs past its message")
        byte = buffer[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def fields(buffer: bytes) -> dict[int, list[int | bytes]]:
    """Every field of one serialised message, by field number, in the order they appear."""
    found: dict[int, list[int | bytes]] = defaultdict(list)
    position = 0
    while position < len(buffer):
        key, position = varint(buffer, position)
        number, kind = key >> 3, key & 7
        if kind == VARINT:
            value, position = varint(buffer, position)
            found[number].append(value)
        elif kind == FIXED64:
            found[number].append(struct.unpack_from("<Q", buffer, position)[0])
            position += 8
        elif kind == FIXED32:
            found[number].append(struct.unpack_from("<I", buffer, position)[0])
            position += 4
        elif kind == LENGTH_DELIMITED:
            size, position = varint(buffer, position)
            if position + size > len(buffer):
                raise BackendError("corrupt protocol buffer: a field runs past its message")
            found[number].append(bytes(buffer[position : position + size]))
            position += size
        else:  # groups (3, 4) are long deprecated and none of the messages read here use them
            raise BackendError(f"protocol buffer field {number} has unsupported wire type {kind}")
    return found


def first(message: dict[int, list[int | bytes]], number: int, default: int | bytes = 0) -> int | bytes:
    values = message.get(number)
    return values[0] if values else default
