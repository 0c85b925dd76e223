"""A file written whole or not at all."""

import os

import pytest

from audionet.lib.core.atomic import atomic_file


def test_the_new_file_replaces_the_old_and_a_failure_leaves_the_old_and_no_temporary(tmp_path):
    path = tmp_path / "deep" / "state.json"
    with atomic_file(str(path), "w", ".json") as handle:
        handle.write("first")
    assert path.read_text() == "first"
    with pytest.raises(RuntimeError), atomic_file(str(path), "w", ".json") as handle:
        handle.write("half of the sec")
        raise RuntimeError("killed mid-write")
    assert path.read_text() == "first" and os.listdir(path.parent) == ["state.json"]
    with atomic_file(str(path), "wb") as handle:
        handle.write(b"second")
    assert path.read_bytes() == b"second"
