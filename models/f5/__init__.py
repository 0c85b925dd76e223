"""F5-TTS through the f5-tts package (`f5-tts:<HF id or folder>`)."""
