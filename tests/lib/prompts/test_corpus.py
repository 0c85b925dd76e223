"""audionet-references' corpus download on loopback: a fabricated LibriSpeech-layout archive
served over real HTTP, checked by sha256, unpacked by the layout only (hostile members are
never written), then verified against its manifest and drawn from as validator references."""

import functools
import hashlib
import http.server
import io
import os
import tarfile
import threading

import numpy as np
import pytest
import soundfile as sf

from audionet.lib.core.errors import ConfigError
from audionet.lib.prompts import corpus
from audionet.lib.prompts.references import FileReferences

ROOT = "LibriSpeech/test-clean"


def flac(seconds: float, seed: int) -> bytes:
    rate = 16_000
    t = np.arange(int(seconds * rate)) / rate
    voice = 0.3 * np.sin(2 * np.pi * (120 + 20 * seed) * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    out = io.BytesIO()
    sf.write(out, voice, rate, format="FLAC")
    return out.getvalue()


def add(tar: tarfile.TarFile, name: str, data: bytes, **kind) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in kind.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if info.isfile() else None)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> bytes:
    """Two speakers: 61 with three good clips, 72 with one good, one too short and one too long;
    plus members that try to escape the folder or overwrite by their own names."""
    clips = {"61-70968-0000": 4.0, "61-70968-0001": 5.0, "61-70968-0002": 3.5,
             "72-1000-0000": 6.0, "72-1000-0001": 1.0, "72-1000-0002": 16.0}  # fmt: skip
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for chapter in ("61/70968", "72/1000"):
            speaker, number = chapter.split("/")
            lines = [f"{key} SAY THE WORDS OF CLIP {key[-1]}" for key in clips if key.startswith(speaker + "-")]
            add(tar, f"{ROOT}/{chapter}/{speaker}-{number}.trans.txt", "\n".join(lines).encode())
        for seed, (key, seconds) in enumerate(clips.items()):
            speaker, chapter, _ = key.split("-")
            add(tar, f"{ROOT}/{speaker}/{chapter}/{key}.flac", flac(seconds, seed))
        add(tar, f"{ROOT}/61/70968/../../../../escape.flac", flac(4.0, 9))
        add(tar, "/tmp/absolute-61-70968-0003.flac", flac(4.0, 9))
        add(tar, f"{ROOT}/61/70968/61-70968-0004.flac", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd")
    return out.getvalue()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test output is for the assertions
        pass


@pytest.fixture(scope="module")
def server(tmp_path_factory, archive):
    """A loopback HTTP server holding the archive at /test-clean.tar.gz (and nothing else)."""
    root = tmp_path_factory.mktemp("mirror")
    (root / "test-clean.tar.gz").write_bytes(archive)
    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def fetch(dest, server, archive, **kwargs):
    kwargs.setdefault("urls", (f"{server}/test-clean.tar.gz",))
    kwargs.setdefault("sha256", hashlib.sha256(archive).hexdigest())
    seen = []
    manifest = corpus.fetch(str(dest), progress=lambda done, total: seen.append((done, total)), **kwargs)
    return manifest, seen


def test_fetch_keeps_3_to_15_s_clips_with_transcripts_by_the_layout_only(tmp_path, server, archive):
    dest = tmp_path / "refs"
    manifest, seen = fetch(dest, server, archive, urls=(f"{server}/missing.tar.gz", f"{server}/test-clean.tar.gz"))
    kept = {"61-70968-0000", "61-70968-0001", "61-70968-0002", "72-1000-0000"}
    assert manifest["clips"] == 4 and "CC BY 4.0" in manifest["licence"]
    assert sorted(os.listdir(dest)) == sorted([corpus.MANIFEST] + [f"{k}{s}" for k in kept for s in (".flac", ".txt")])
    assert (dest / "61-70968-0001.txt").read_text() == "Say the words of clip 1\n"
    assert seen[-1] == (len(archive), len(archive))  # progress saw every byte of the second mirror
    assert not (tmp_path / "escape.flac").exists() and not os.path.exists("/tmp/absolute-61-70968-0003.flac")
    refs = FileReferences(str(dest))  # exactly what the validator reads
    drawn = refs.draw(np.random.default_rng(0))
    assert len(refs) == 4 and drawn.transcript.startswith("Say the words") and 3.0 <= drawn.audio.seconds <= 6.0


def test_per_speaker_cap(tmp_path, server, archive):
    manifest, _ = fetch(tmp_path, server, archive, per_speaker=1)
    assert manifest["clips"] == 2 and {name.split("-")[0] for name in manifest["files"]} == {"61", "72"}


def test_a_checksum_mismatch_keeps_nothing(tmp_path, server, archive):
    with pytest.raises(ConfigError, match="is not the expected") as caught:
        fetch(tmp_path, server, archive, sha256="0" * 64)
    assert "\n" not in str(caught.value) and os.listdir(tmp_path) == []


def test_verify_names_changed_and_missing_files(tmp_path, server, archive):
    fetch(tmp_path, server, archive)
    assert corpus.verify(str(tmp_path)) == []
    (tmp_path / "61-70968-0000.txt").write_text("Other words\n")
    os.unlink(tmp_path / "72-1000-0000.flac")
    assert corpus.verify(str(tmp_path)) == ["61-70968-0000.txt changed", "72-1000-0000.flac missing"]
    with pytest.raises(ConfigError, match="no readable manifest.json"):
        corpus.verify(str(tmp_path / "nowhere"))
