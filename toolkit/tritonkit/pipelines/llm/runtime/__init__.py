"""The LLM generation loop as ordinary Python: importable as `tritonkit.pipelines.llm.runtime` and, once copied
into a model's version folder, as `llm_runtime` inside Triton's Python backend.

Imports only numpy, onnxruntime (decoder.py) and tokenizers (text.py) besides its sibling modules.
"""
