"""Thin `TritonPythonModel` adapters of the TTS pipeline (tritonkit:ensembles/tts.yaml); the work is in `runtime/`.

Each runs inside Triton's Python backend with the whole `tts` folder copied beside it as `tts_runtime`.
"""
