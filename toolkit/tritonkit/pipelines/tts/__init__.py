"""TTS pipeline: text frontend (normalize, split, phonemize, encode) -> Kokoro-82M (end-to-end acoustic+vocoder).

`frontend/` and `runtime/` are ordinary Python that imports only the standard library, numpy, onnxruntime and
Debian's libespeak-ng (through ctypes), and each other only relatively, so the two folders (and this file) are
copied into a model's version folder as `tts_runtime/` for thin `TritonPythonModel` adapters. `kokoro/` is
build-time: it finds the Kokoro packages and joins the model into the project's cache.
"""
