"""Serving pipelines whose runtime code ships into model folders (e.g. `llm/`: tokenizer -> KV-cache decoder -> text).

Each pipeline keeps its runtime in plain, unit-tested Python that imports only what the Triton container
has (numpy, onnxruntime, tokenizers), plus thin `TritonPythonModel` adapters that the build copies into
version folders through `files: {...: tritonkit:pipelines/<pipeline>/...}`.
"""
