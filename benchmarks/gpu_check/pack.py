"""What a device call brings back: its $OUT returns at most 8 files, 16 MiB each, no more than 2 folders down.
gpu-check packs after every step, so a call cut short still returns what the finished steps measured:

    results.tar.gz   the whole <device-slug>/ folder (every step's tables, JSON, plots and log), paths
                     relative to the results root: `tar xzf results.tar.gz -C benchmarks/results`
    gpu-tables.md    the tables in seed 003's, 000's and 001's formats
    gpu-check.md     each step's status, time and reason

Each file is written beside and renamed into place: a copy is whole or absent, never half written.
"""

from __future__ import annotations

import os
import shutil
import tarfile

TARBALL = "results.tar.gz"
COPIED = ("gpu-tables.md", "gpu-check.md")
MAX_FILE_BYTES = 16 * 2**20  # the device tool's limit per file


def pack(out: str, slug: str, into: str) -> list[str]:
    """`<out>/<slug>/` as `<into>/results.tar.gz`, and its summaries beside; the paths written."""
    os.makedirs(into, exist_ok=True)
    source = os.path.join(out, slug)
    partial = os.path.join(into, TARBALL + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        tar.add(source, arcname=slug, filter=lambda info: None if info.name.endswith(".pyc") else info)
    if os.path.getsize(partial) > MAX_FILE_BYTES:
        os.remove(partial)
        raise OSError(f"{TARBALL} is over {MAX_FILE_BYTES // 2**20} MiB: a device call would not return it")
    written = [os.path.join(into, TARBALL)]
    os.replace(partial, written[0])
    for name in COPIED:
        if os.path.isfile(os.path.join(source, name)):
            shutil.copyfile(os.path.join(source, name), os.path.join(into, name + ".partial"))
            os.replace(os.path.join(into, name + ".partial"), os.path.join(into, name))
            written.append(os.path.join(into, name))
    return written
