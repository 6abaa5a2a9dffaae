"""Calling other models from a Python model (BLS): importable as `tritonkit.pipelines.bls.runtime` and, once
copied into a model's version folder (`files: {bls_runtime: tritonkit:pipelines/bls/runtime}`), as `bls_runtime`
inside Triton's Python backend.

Imports only numpy; the Triton module `triton_python_backend_utils` is passed in by the model, because it
exists only inside Triton's Python backend stub.
"""
from .calls import Callees, CallError, RequestError, respond

__all__ = ["CallError", "Callees", "RequestError", "respond"]
