"""Generation backends on the coqui-tts package (Coqui TTS: XTTS-v2), loaded by HF id or local folder through `hf:`."""
