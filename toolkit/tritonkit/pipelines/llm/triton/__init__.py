"""Thin `TritonPythonModel` adapters, one per pipeline model, copied as `model.py` into version folders.

They import `triton_python_backend_utils` and the copied `llm_runtime` package, so they run only inside
Triton's Python backend; this file makes them package data of tritonkit (never imported).
"""
