"""How `tune --joint` searches the LLM engine (`engine.py`) and measures a pipeline running it (`measure.py`, with
the streaming clients of `stream.py`, which benchmarks/llm.py reports with too)."""
