"""Voice clone by context with CSM (sesame/csm-1b or a local path) via transformers.

CSM speaks the next turn of a conversation in the voice its context sets: the context is the reference
clip as speaker 0's turn (its transcript, then its audio as Mimi codes), and the request's text is speaker
0's next turn, with no audio. Each turn is written as the CSM processor expects it: `[speaker]text` between
the tokenizer's begin- and end-of-text tokens, an audio turn as `<|AUDIO|><|audio_eos|>` that the processor
expands to one token per codec frame. The backbone predicts the first codebook of each frame and the depth
decoder the rest; Mimi decodes at 24 kHz. One request at a time: transformers 5.23's CSM fails on a batch
whose items' audio contexts differ (its merge of audio codes into the left-padded batch miscounts frames), and
every request carries its own reference. On CUDA: bf16 (fp16 before compute capability 8.0), SDPA.
"""

from __future__ import annotations

import numpy as np

from audionet.models.hf.speech_lm import SpeechLmCloner, waveforms

SPEAKER = 0


class CsmVoiceCloner(SpeechLmCloner):
    def __init__(self, name: str, *, device: str = "cpu", dtype: str = "auto") -> None:
        from transformers import CsmForConditionalGeneration

        self._load(name, device, dtype, None, CsmForConditionalGeneration, "sdpa")
        codec = self.model.config.codec_config
        self.sample_rate = int(codec.sampling_rate)
        self.frame_rate = float(codec.frame_rate)
        tokenizer = self.processor.tokenizer
        self.begin, self.end = tokenizer.bos_token or "", tokenizer.eos_token or ""

    def turn(self, text: str, audio: bool) -> str:
        spoken = f"{self.begin}[{SPEAKER}]{' '.join(text.split())}{self.end}"
        return spoken + (f"{self.processor.audio_token}{self.processor.audio_eos_token}" if audio else "")

    def _run_batch(self, frames: int, items) -> list[np.ndarray]:
        import torch

        with torch.inference_mode():
            with self.stage("audio_codec"):  # the reference -> Mimi codes happens inside the processor call
                inputs = self.processor(
                    text=[
                        self.turn(ref_text, audio=True) + self.turn(text, audio=False) for text, _, ref_text, _ in items
                    ],
                    audio=[ref for _, ref, _, _ in items],
                    add_special_tokens=False,
                    return_tensors="pt",
                )
            inputs = inputs.to(self.device)
            if "input_values" in inputs:
                inputs["input_values"] = inputs["input_values"].to(self.dtype)
            with self.stage("decoder"):
                audio = self.model.generate(**inputs, output_audio=True, max_new_tokens=frames, do_sample=True)
        return waveforms(audio)
