"""MusicGen (facebook/musicgen-small|medium|large|melody or a local path) via transformers.

audiocraft is not used: it pins torch 2.1 and is not installable beside torch 2.13;
transformers loads the same checkpoints. Seconds become decoder steps at the
codec frame rate (50 Hz), rounded up to a length bucket so concurrent requests
of similar length share one batched `generate`; each result is trimmed to its
own length. Classifier-free guidance and top-k come from the preset.
On CUDA a static KV cache + torch.compile is tried at warm-up and dropped if
it fails; the CPU path never compiles.
"""

from __future__ import annotations

import logging
import math
from contextlib import ExitStack
from dataclasses import dataclass

import numpy as np

from audionet.lib.core.audio import Audio
from audionet.lib.core.errors import BackendError, WireError
from audionet.models.base import MusicGenerator
from audionet.models.hf.batching import LengthBucketBatcher
from audionet.models.hf.loading import (
    from_pretrained,
    model_type,
    place,
    resolve_dtype,
    seed_everything,
)

log = logging.getLogger("models.musicgen")


@dataclass(frozen=True)
class MusicPreset:
    model_id: str
    guidance_scale: float
    top_k: int


CHECKPOINTS = {
    "fast": MusicPreset("facebook/musicgen-small", 3.0, 250),
    "balanced": MusicPreset("facebook/musicgen-medium", 3.0, 250),
    "quality": MusicPreset("facebook/musicgen-large", 3.0, 250),
}
BUCKET_SECONDS = 2.0  # requests within the same 2 s of length can share a batch
MAX_MUSIC_SECONDS = 30.0  # MusicGen was trained on 30 s clips (and the protocol asks for at most 30 s)


class MusicGenMusicGenerator(MusicGenerator):
    def __init__(
        self,
        name: str,
        *,
        device: str = "cpu",
        dtype: str = "auto",
        preset: str = "balanced",
        batch_window_s: float | None = None,
        max_batch: int = 4,
        compile: bool | None = None,
    ) -> None:
        from transformers import (
            AutoProcessor,
            MusicgenForConditionalGeneration,
            MusicgenMelodyForConditionalGeneration,
        )

        if preset not in CHECKPOINTS:
            raise BackendError(f"unknown music preset {preset!r}; use {', '.join(CHECKPOINTS)}")
        self.preset = CHECKPOINTS[preset]
        self.device, self.dtype = device, resolve_dtype(dtype, device)
        self.processor = from_pretrained(AutoProcessor, name)
        config_type = model_type(name)
        loader = (
            MusicgenMelodyForConditionalGeneration
            if config_type == "musicgen_melody"
            else MusicgenForConditionalGeneration
        )
        # SDPA for the transformer parts; the EnCodec codec has no attention to speak of.
        model = from_pretrained(
            loader, name, attn_implementation={"decoder": "sdpa", "text_encoder": "sdpa"}, dtype=self.dtype
        )
        self.model = place(model, device, self.dtype)
        codec = self.model.config.audio_encoder
        self.sample_rate = int(codec.sampling_rate)
        self.frame_rate = float(
            getattr(codec, "frame_rate", None) or self.sample_rate / np.prod(codec.upsampling_ratios)
        )
        self.num_codebooks = int(self.model.decoder.config.num_codebooks)
        self.model_id = name
        on_gpu = device.startswith("cuda")
        # Batching waits a little for company: worth it on a GPU, pure latency on 2 CPU cores.
        window = batch_window_s if batch_window_s is not None else (0.03 if on_gpu else 0.0)
        self.batcher = LengthBucketBatcher(self._run_batch, window_s=window, max_batch=max_batch)
        self.want_compile = on_gpu if compile is None else (compile and on_gpu)
        self.compiled: bool | None = None  # None until the first warm-up tries compiling (once: later warm-ups time)
        self._stage_hooks()

    # -- stages ---------------------------------------------------------------
    def _stage_hooks(self) -> None:
        """text encoder -> decoder steps -> codec decode all run inside one `generate`;
        hooks on the text encoder and the codec mark where each stage starts and ends."""
        self._stack: ExitStack | None = None

        def enter(name):
            if self._stack is not None:
                self._stack.close()
                self._stack.enter_context(self.stage(name))

        self.model.text_encoder.register_forward_pre_hook(lambda *_: enter("text_encoder"))
        self.model.text_encoder.register_forward_hook(lambda *_: enter("decoder"))
        decode = self.model.audio_encoder.decode

        def timed_decode(*args, **kwargs):
            enter("audio_codec")
            return decode(*args, **kwargs)

        self.model.audio_encoder.decode = timed_decode

    # -- generation -------------------------------------------------------------
    def tokens_for(self, seconds: float) -> int:
        """Decoder steps for `seconds`, rounded up to the bucket and capped; the delay
        pattern costs num_codebooks - 1 extra steps."""
        seconds = min(max(seconds, 0.1), MAX_MUSIC_SECONDS)
        bucket = math.ceil(seconds / BUCKET_SECONDS) * BUCKET_SECONDS
        return math.ceil(min(bucket, MAX_MUSIC_SECONDS) * self.frame_rate) + self.num_codebooks

    def generate(self, prompt: str, seconds: float, *, seed: int = 0) -> Audio:
        if not prompt.strip():
            raise WireError("music prompt is empty")
        if not 0 < seconds <= MAX_MUSIC_SECONDS:
            raise WireError(f"music length must be in (0, {MAX_MUSIC_SECONDS:g}] s")
        samples = self.batcher.submit(self.tokens_for(seconds), (prompt, seed))
        wanted = round(seconds * self.sample_rate)
        samples = samples[:wanted]
        if samples.size < wanted:
            samples = np.pad(samples, (0, wanted - samples.size))
        return Audio(samples, self.sample_rate)

    def _run_batch(self, tokens: int, items) -> list[np.ndarray]:
        import torch

        prompts = [prompt for prompt, _ in items]
        # One sampling stream per batch: seeded by the first request, so a lone
        # request is deterministic per seed (batched ones per batch composition).
        seed_everything(items[0][1])
        inputs = self.processor(text=prompts, padding=True, return_tensors="pt").to(self.device)
        with ExitStack() as stack, torch.inference_mode():
            self._stack = stack
            try:
                audio = self.model.generate(
                    **inputs,
                    do_sample=True,
                    guidance_scale=self.preset.guidance_scale,
                    top_k=self.preset.top_k,
                    max_new_tokens=tokens,
                    **self._cache_kwargs(),
                )
            finally:
                self._stack = None
        audio = audio.float().cpu().numpy()  # (batch, channels, samples)
        out = [np.nan_to_num(a.mean(axis=0)).astype(np.float32) for a in audio]
        peak = max(float(np.abs(a).max()) for a in out) if out else 0.0
        if not np.isfinite(peak):
            raise BackendError("music generation produced non-finite audio")
        return [np.clip(a, -1.0, 1.0) for a in out]

    def _cache_kwargs(self) -> dict:
        return {"cache_implementation": "static"} if getattr(self, "compiled", False) else {}

    def warmup(self) -> None:
        if self.want_compile and self.compiled is None:
            self._try_compile()
        super().warmup()

    def _try_compile(self) -> None:
        """Static KV cache + torch.compile of the decoder step (CUDA graphs); any failure
        at warm-up leaves the eager model in place."""
        import torch

        eager = self.model.decoder.forward
        try:
            compiled = torch.compile(eager, mode="reduce-overhead", fullgraph=False)
            self.model.decoder.forward = owned_outputs(compiled)
            self.compiled = True
            self.generate("compile warm up", 1.0, seed=0)
            log.info("MusicGen decoder compiled with a static KV cache")
        except Exception as error:  # compile support varies by GPU, driver and model
            log.warning(
                "torch.compile/static cache unavailable (%s: %s); running eager",
                type(error).__name__,
                str(error).splitlines()[0][:160] if str(error) else "",
            )
            self.model.decoder.forward = eager
            self.compiled = False


def owned_outputs(step):
    """`step` (a decoder compiled with CUDA graphs) as a function whose outputs are its own. A graph's replay
    writes its outputs into the same memory each time, and generate reads a step's outputs after the next step
    ran: the first H200 call failed its warm-up with "accessing tensor output of CUDAGraphs that has been
    overwritten by a subsequent run". Each call starts a new graph step and returns copies (the logits of one
    step: a few MB)."""
    import torch

    def run(*args, **kwargs):
        torch.compiler.cudagraph_mark_step_begin()
        out = step(*args, **kwargs)
        for key, value in list(out.items()):
            if isinstance(value, torch.Tensor):
                out[key] = value.clone()
        return out

    return run
