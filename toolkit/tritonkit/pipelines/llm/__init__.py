"""LLM pipeline: tokenizer -> KV-cache decoder (ONNX) -> in-flight batched streaming generation -> text.

- `runtime/`: the generation loop as ordinary Python (sampling, stop conditions, KV-cache accounting, batched
  decode steps, incremental detokenization). Copied into version folders as the package `llm_runtime`.
- `triton/`: thin `TritonPythonModel` adapters, copied as each model's `model.py`.
- `export/`: PyTorch side (never imported inside Triton): decoder wrappers with explicit past/present KV cache,
  the tiny GPT and SmolLM2 entry points, and `prepare`, which exports and verifies a decoder and writes its
  tokenizer and generation settings next to it.
"""
