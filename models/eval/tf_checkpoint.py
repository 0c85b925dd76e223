"""Read a TensorFlow (V2 format) checkpoint's tensors with numpy alone.

A checkpoint `PREFIX` is two files:
* `PREFIX.index`, a LevelDB-style table (an SSTable): sorted keys (tensor names) with
  prefix-compressed keys in blocks, an index block that points at them and a 48-byte footer. The
  value under each name is a BundleEntryProto: dtype, shape, shard, offset and size of its bytes.
  The empty key holds the BundleHeaderProto (how many data shards).
* `PREFIX.data-0000S-of-0000N`: the tensors' raw little-endian bytes, back to back.

Only uncompressed tables and whole (unsliced) numeric tensors are read: that is what
tf.train.Saver writes and what musicnn ships. Anything else is refused with one line.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from audionet.lib.core.errors import BackendError
from audionet.models.eval.protobuf_wire import fields, first, varint

TABLE_MAGIC = 0xDB4775248B80FB57  # LevelDB's table magic number, the footer's last 8 bytes
FOOTER_BYTES = 48
BLOCK_TRAILER_BYTES = 5  # compression type (1 byte) and a CRC (4 bytes) after every block
DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 6: np.int8, 9: np.int64, 10: np.bool_, 19: np.float16}
# BundleEntryProto / BundleHeaderProto / TensorShapeProto field numbers (tensorflow/core/protobuf/tensor_bundle.proto)
ENTRY_DTYPE, ENTRY_SHAPE, ENTRY_SHARD, ENTRY_OFFSET, ENTRY_SIZE, ENTRY_SLICES = 1, 2, 3, 4, 5, 7
HEADER_SHARDS = 1
SHAPE_DIM, DIM_SIZE = 2, 1


def _block(table: bytes, handle: bytes) -> bytes:
    offset, position = varint(handle, 0)
    size, _ = varint(handle, position)
    if offset + size + BLOCK_TRAILER_BYTES > len(table):
        raise BackendError("checkpoint index is truncated: a block runs past the end of the file")
    if table[offset + size] != 0:
        raise BackendError("checkpoint index uses a compressed table; only uncompressed ones are read")
    return table[offset : offset + size]


def _entries(block: bytes) -> list[tuple[bytes, bytes]]:
    """(key, value) pairs of one block: each key shares a prefix with the one before it."""
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    end = len(block) - 4 * (restarts + 1)
    found, key, position = [], b"", 0
    while position < end:
        shared, position = varint(block, position)
        unshared, position = varint(block, position)
        value_size, position = varint(block, position)
        key = key[:shared] + block[position : position + unshared]
        position += unshared
        found.append((key, block[position : position + value_size]))
        position += value_size
    return found


def _table(path: Path) -> list[tuple[bytes, bytes]]:
    table = path.read_bytes()
    if len(table) < FOOTER_BYTES or struct.unpack_from("<Q", table, len(table) - 8)[0] != TABLE_MAGIC:
        raise BackendError(f"{path} is not a TensorFlow checkpoint index (no table footer)")
    footer = table[-FOOTER_BYTES:]
    _, position = varint(footer, 0)  # the metaindex handle: offset ...
    _, position = varint(footer, position)  # ... and size (no meta blocks are needed)
    index = _block(table, footer[position:])
    return [entry for _, handle in _entries(index) for entry in _entries(_block(table, handle))]


def _shape(entry: dict) -> tuple[int, ...]:
    shape = fields(first(entry, ENTRY_SHAPE, b""))  # type: ignore[arg-type]
    return tuple(int(first(fields(dim), DIM_SIZE)) for dim in shape.get(SHAPE_DIM, []))  # type: ignore[arg-type]


def read_checkpoint(prefix: str | Path) -> dict[str, np.ndarray]:
    """Every numeric tensor in the checkpoint, by name (strings and other dtypes are left out)."""
    prefix = str(prefix)  # a string: musicnn's prefix is a folder with a trailing slash (files ".index", ...)
    index = Path(prefix + ".index")
    if not index.is_file():
        raise BackendError(f"no checkpoint index at {index}")
    entries = _table(index)
    header = fields(next((value for key, value in entries if key == b""), b""))
    shards = int(first(header, HEADER_SHARDS, 1))
    data = [Path(f"{prefix}.data-{shard:05d}-of-{shards:05d}").read_bytes() for shard in range(shards)]
    tensors = {}
    for key, value in entries:
        entry = fields(value)
        dtype = DTYPES.get(int(first(entry, ENTRY_DTYPE)))
        if key == b"" or dtype is None:
            continue
        if entry.get(ENTRY_SLICES):
            raise BackendError(f"checkpoint tensor {key.decode()} is saved in slices; only whole tensors are read")
        shard, offset, size = (int(first(entry, number)) for number in (ENTRY_SHARD, ENTRY_OFFSET, ENTRY_SIZE))
        shape = _shape(entry)
        if size != int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize or offset + size > len(data[shard]):
            raise BackendError(f"checkpoint tensor {key.decode()}: {size} bytes do not hold shape {shape}")
        raw = np.frombuffer(
            data[shard], dtype=np.dtype(dtype).newbyteorder("<"), count=size // np.dtype(dtype).itemsize, offset=offset
        )
        tensors[key.decode()] = raw.reshape(shape).astype(dtype)
    return tensors
