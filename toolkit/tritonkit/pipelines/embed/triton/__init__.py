"""Thin `TritonPythonModel` adapters of the embed pipeline, copied into version folders as `model.py`; the work is in
`embed_runtime` (this package's `runtime/`)."""
