"""Generation backends on Hugging Face transformers (MusicGen, VITS/MMS, SpeechT5, Dia)."""
