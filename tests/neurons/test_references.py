"""The audionet-references command: exit codes and one-line messages (the download itself is
covered in tests/lib/prompts/test_corpus.py)."""

import hashlib

from audionet.neurons import references
from tests.lib.prompts.test_corpus import archive, server  # noqa: F401  (fixtures)


def test_fetch_then_verify(tmp_path, server, archive, capsys):  # noqa: F811
    url, sha = f"{server}/test-clean.tar.gz", hashlib.sha256(archive).hexdigest()
    assert references.main(["fetch", "--dest", str(tmp_path), "--url", url, "--sha256", sha]) == 0
    assert "4 reference clips in" in capsys.readouterr().out
    assert references.main(["verify", str(tmp_path)]) == 0
    (tmp_path / "61-70968-0002.flac").write_bytes(b"tampered")
    assert references.main(["verify", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip().endswith("61-70968-0002.flac changed")


def test_usage_errors_are_one_line(tmp_path, server, capsys):  # noqa: F811
    assert references.main(["fetch", "--dest", str(tmp_path), "--url", f"{server}/test-clean.tar.gz"]) == 2
    assert references.main(["fetch", "--dest", str(tmp_path), "--url", f"{server}/x.tar.gz", "--sha256", "0" * 64]) == 2
    assert references.main(["verify", str(tmp_path / "nowhere")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("audionet-references: error:") for line in lines)
