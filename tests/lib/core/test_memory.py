"""Freed heap below live memory goes back to the system when trimmed (glibc)."""

import os

from audionet.lib.core.memory import trim_heap


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_freed_memory_below_a_live_block_goes_back_when_trimmed():
    blocks = [bytearray(b"x" * 4096) for _ in range(40_000)]  # 160 MB from malloc (over pymalloc's 512 bytes)
    keeper = bytearray(b"k" * 4096)  # live above them: free() alone cannot give their pages back
    del blocks
    before = rss_mb()
    assert trim_heap()
    assert rss_mb() < before - 80, (before, rss_mb())
    assert keeper[0] == ord("k")
