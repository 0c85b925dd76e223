"""Higgs Audio v2 (bosonai/higgs-audio-v2-generation-3B-base, or a local path) via transformers, as text to speech
and as voice clone: one backend serves both slots.

A Llama LM reads the checkpoint's chat template's rendering of a conversation and writes `num_codebooks` codebooks of
its audio tokenizer (DAC acoustic and HuBERT semantic codes, 25 frames a second at 24 kHz) in a delay pattern, which
the processor builds for a reference and reverts for the answer. A clone is the conversation of the library's own
example: the system line, the reference's transcript as a user turn, the reference clip as the assistant's audio turn
(`<|audio_out_bos|><|AUDIO_OUT|><|audio_eos|>`, the processor expands it to the clip's codes), then the text as the next
user turn; text to speech leaves out the reference's two turns (the checkpoint's own voice, one voice). The prompt ends
on the assistant's `<|audio_out_bos|>`. Sampled (`do_sample=True`, seeded). One request at a time: transformers 5.23's
`batch_decode` cuts every row of a batch where the last row's generation starts, which is wrong for rows whose
references differ in length. On CUDA: bf16 (fp16 before compute capability 8.0), SDPA.
"""

from __future__ import annotations

import numpy as np

from audionet.models.hf.speech_lm import SpeechLmCloner, SpeechLmSynthesizer, waveforms

SYSTEM = "Generate audio following instruction."


def turn(role: str, kind: str, text: str = "") -> dict:
    return {"role": role, "content": [{"type": kind, **({"text": text} if kind == "text" else {})}]}


class HiggsAudioV2Speech(SpeechLmCloner, SpeechLmSynthesizer):
    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from transformers import HiggsAudioV2ForConditionalGeneration

        self._load(name, device, dtype, None, HiggsAudioV2ForConditionalGeneration, "sdpa")
        self.processor.audio_tokenizer = self.processor.audio_tokenizer.to(device).eval()  # fp32: it encodes audio
        self.sample_rate = int(self.processor.audio_tokenizer.config.sample_rate)
        self.frame_rate = float(self.processor.audio_tokenizer.config.frame_rate)
        self.delay = int(self.model.config.num_codebooks) - 1  # steps of the delay pattern, beyond the frames

    def prompt(self, text: str, reference_text: str | None) -> str:
        """The chat template's rendering: the reference's turns when cloning (a transcript, possibly empty)."""
        voice = [] if reference_text is None else [turn("user", "text", reference_text), turn("assistant", "audio")]
        conversation = [turn("system", "text", SYSTEM), *voice, turn("user", "text", text)]
        return self.processor.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        ((text, ref, ref_text, _),) = items  # max_batch is 1 (see the module docstring)
        cloning = ref.size > 0
        with torch.inference_mode():
            with self.stage("audio_codec"):  # the reference -> codes happens inside the processor call
                inputs = self.processor(
                    text=[self.prompt(text, ref_text if cloning else None)],
                    audio=[ref] if cloning else None,
                    sampling_rate=self.sample_rate,
                    return_tensors="pt",
                ).to(self.device)
            with self.stage("decoder"):
                codes = self.model.generate(**inputs, max_new_tokens=frames + self.delay + 1, do_sample=True)
            with self.stage("audio_codec"):
                audio = self.processor.batch_decode(codes)
        return waveforms(audio)
