"""The LLM pipeline behind /v1/chat/completions and /v1/completions (ensemble `llm` of tritonkit:ensembles/llm.yaml)."""
