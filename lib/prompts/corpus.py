"""Human read-speech references for voice-clone requests: download a public corpus, check its
checksum, and keep a folder of `name.flac` + `name.txt` that `--vc.references` (and, on a real
network, the validator by default) reads.

LibriSpeech test-clean (OpenSLR 12, CC BY 4.0): 40 speakers, 5.4 h of read audiobooks. We keep
up to `per_speaker` clips of 3-15 s per speaker (400 by default, about 100 MB): long enough to
carry a voice, short enough to travel in a request. Archive members are never written by
their own names: only files matching the corpus layout are read, and each is written under a
name we build from its validated parts. A manifest records every file's sha256 for `verify`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import soundfile as sf

from audionet.lib.core.errors import ConfigError

MANIFEST = "manifest.json"
CLIP_SECONDS = (3.0, 15.0)


@dataclass(frozen=True)
class Corpus:
    name: str
    urls: tuple[str, ...]  # mirrors, tried in order
    sha256: str
    licence: str
    member: re.Pattern  # audio member: groups speaker, chapter, utterance id
    transcripts: re.Pattern  # transcript member


CORPORA = {
    "librispeech-test-clean": Corpus(
        name="librispeech-test-clean",
        urls=(
            "https://www.openslr.org/resources/12/test-clean.tar.gz",
            "https://us.openslr.org/resources/12/test-clean.tar.gz",
            "https://openslr.elda.org/resources/12/test-clean.tar.gz",
        ),
        sha256="39fde525e59672dc6d1551919b1478f724438a95aa55f874b576be21967e6c23",
        licence="CC BY 4.0 (LibriSpeech, Panayotov et al. 2015, from LibriVox public-domain audiobooks)",
        member=re.compile(r"^LibriSpeech/test-clean/(\d{1,6})/(\d{1,7})/(\1-\2-\d{1,5})\.flac$"),
        transcripts=re.compile(r"^LibriSpeech/test-clean/\d{1,6}/\d{1,7}/\d{1,6}-\d{1,7}\.trans\.txt$"),
    )
}
DEFAULT_CORPUS = "librispeech-test-clean"
DEFAULT_DIR = os.path.expanduser(os.path.join("~", ".audionet", "references", DEFAULT_CORPUS))


def sentence_case(text: str) -> str:
    """LIBRISPEECH SHOUTS WITHOUT PUNCTUATION -> Librispeech shouts without punctuation."""
    words = text.strip().lower()
    return (words[:1].upper() + words[1:]) if words else ""


def download(urls: tuple[str, ...], expected_sha256: str, into: str, progress: Callable[[int, int], None]) -> str:
    """The archive at the first mirror that answers, streamed to a file in `into` and checked
    against `expected_sha256` (the file is removed when it does not match)."""
    import httpx

    failures = []
    for url in urls:
        fd, path = tempfile.mkstemp(dir=into, prefix=".download-", suffix=".tar.gz")
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, httpx.stream("GET", url, follow_redirects=True, timeout=60) as reply:
                reply.raise_for_status()
                total, done = int(reply.headers.get("content-length") or 0), 0
                for chunk in reply.iter_bytes(1 << 20):
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    progress(done, total)
        except httpx.HTTPError as error:
            os.unlink(path)
            failures.append(f"{url}: {type(error).__name__}")
            continue
        if digest.hexdigest() != expected_sha256:  # a bad mirror: nothing of it is kept, try the next
            os.unlink(path)
            failures.append(f"{url}: sha256 {digest.hexdigest()[:12]}... is not the expected {expected_sha256[:12]}...")
            continue
        return path
    raise ConfigError("could not download the corpus: " + "; ".join(failures))


def members(archive: str, corpus: Corpus) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of the archive's audio and transcript members, by the corpus layout only."""
    with tarfile.open(archive, "r:gz") as tar:
        for info in tar:
            if info.isfile() and (corpus.member.match(info.name) or corpus.transcripts.match(info.name)):
                handle = tar.extractfile(info)
                if handle is not None:
                    yield info.name, handle.read()


def select(archive: str, corpus: Corpus, per_speaker: int) -> dict[str, tuple[bytes, str]]:
    """utterance id -> (FLAC bytes, transcript) for up to `per_speaker` clips of 3-15 s each."""
    audio: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    texts: dict[str, str] = {}
    for name, data in members(archive, corpus):
        match = corpus.member.match(name)
        if match is None:  # a transcript file: "<utterance id> WORDS ..." per line
            for line in data.decode("utf-8", "replace").splitlines():
                key, _, words = line.partition(" ")
                texts[key] = sentence_case(words)
            continue
        speaker, _, utterance = match.groups()
        if counts.get(speaker, 0) >= per_speaker:
            continue
        info = sf.info(io.BytesIO(data))
        if CLIP_SECONDS[0] <= info.duration <= CLIP_SECONDS[1]:
            audio[utterance] = data
            counts[speaker] = counts.get(speaker, 0) + 1
    return {key: (data, texts[key]) for key, data in audio.items() if texts.get(key)}


def write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def fetch(
    dest: str,
    corpus_name: str = DEFAULT_CORPUS,
    *,
    urls: tuple[str, ...] = (),
    sha256: str = "",
    per_speaker: int = 10,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> dict:
    """Download, check and unpack a corpus into `dest` as name.flac + name.txt; the manifest."""
    corpus = CORPORA[corpus_name]
    os.makedirs(dest, exist_ok=True)
    archive = download(urls or corpus.urls, sha256 or corpus.sha256, dest, progress)
    try:
        chosen = select(archive, corpus, per_speaker)
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ConfigError(f"the corpus archive is not a readable tar.gz: {error}") from None
    finally:
        os.unlink(archive)
    if not chosen:
        raise ConfigError(f"the archive holds no {corpus.name} clips of {CLIP_SECONDS[0]:g}-{CLIP_SECONDS[1]:g} s")
    files = {}
    for key, (flac, text) in sorted(chosen.items()):
        for suffix, data in ((".flac", flac), (".txt", (text + "\n").encode())):
            write_atomic(os.path.join(dest, key + suffix), data)
            files[key + suffix] = hashlib.sha256(data).hexdigest()
    manifest = {
        "corpus": corpus.name,
        "archive_sha256": sha256 or corpus.sha256,
        "licence": corpus.licence,
        "clips": len(chosen),
        "files": files,
    }
    write_atomic(os.path.join(dest, MANIFEST), json.dumps(manifest, indent=1).encode())
    return manifest


def verify(dest: str) -> list[str]:
    """Files listed in the manifest that are missing or changed (empty: the folder is intact)."""
    try:
        with open(os.path.join(dest, MANIFEST)) as handle:
            files = json.load(handle)["files"]
    except (OSError, ValueError, KeyError) as error:
        raise ConfigError(f"{dest}: no readable {MANIFEST} ({error})") from None
    bad = []
    for name, digest in sorted(files.items()):
        path = os.path.join(dest, os.path.basename(name))
        try:
            with open(path, "rb") as handle:
                if hashlib.sha256(handle.read()).hexdigest() != digest:
                    bad.append(f"{name} changed")
        except OSError:
            bad.append(f"{name} missing")
    return bad
