"""Thin `TritonPythonModel` adapters over `image_runtime`, copied into version folders as `model.py`."""
