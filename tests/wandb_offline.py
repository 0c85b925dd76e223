"""Read an offline W&B run back from its `run-*.wandb` file (test helper).

wandb 0.31 has no Python reader any more (the datastore moved into the Go
core), so this walks the file format directly: a 7-byte header (":W&B",
magic 0xBEE1, version 0) then 32 KiB blocks of LevelDB-log chunks
(crc32 u32, length u16 LE, type u8: 1 full, 2 first, 3 middle, 4 last), each
record a serialised `wandb_internal_pb2.Record`.
"""

from __future__ import annotations

import glob
import json
import os
import struct
import time

from google.protobuf.message import DecodeError
from wandb.proto import wandb_internal_pb2

BLOCK = 32 * 1024
HEADER = 7


def records(path: str) -> list:
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:4] != b":W&B":
        return []  # not written yet
    out, pending, pos = [], b"", HEADER
    while pos + 7 <= len(data):
        left_in_block = BLOCK - pos % BLOCK
        if left_in_block < 7:  # block trailer padding
            pos += left_in_block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == 0 or len(chunk) < length:  # space the writer has not reached, or a chunk half written
            break
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            try:
                record.ParseFromString(pending)
            except DecodeError:  # read while W&B's core was writing it: the caller reads again
                break
            out.append(record)
            pending = b""
    return out


def run_files(wandb_dir: str) -> list[str]:
    return sorted(glob.glob(os.path.join(wandb_dir, "wandb", "offline-run-*", "run-*.wandb")))


def read_run(wandb_dir: str, timeout: float = 15.0) -> dict:
    """The only offline run under `wandb_dir` (see `read_run_file`)."""
    (path,) = run_files(wandb_dir)
    return read_run_file(path, timeout)


def read_run_file(path: str, timeout: float = 15.0) -> dict:
    """{"config": {...}, "history": [{key: value}, ...], "exited": bool} of one offline run, once W&B's
    service process has written the run's exit record (it writes after `finish()` returns), or what
    is there after `timeout` seconds (then "exited" is False)."""
    deadline = time.monotonic() + timeout
    while True:
        found = records(path)
        if any(r.WhichOneof("record_type") == "exit" for r in found) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    config, history = {}, []
    for record in found:
        kind = record.WhichOneof("record_type")
        if kind == "run":
            config.update({item.key: json.loads(item.value_json) for item in record.run.config.update})
        elif kind == "config":
            config.update({item.key: json.loads(item.value_json) for item in record.config.update})
        elif kind == "history":
            row = {}
            for item in record.history.item:
                key = item.key or "/".join(item.nested_key)
                row[key] = json.loads(item.value_json)
            history.append(row)
    exited = any(r.WhichOneof("record_type") == "exit" for r in found)
    return {"config": config, "history": history, "path": path, "exited": exited}
