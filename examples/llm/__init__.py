"""Example LLM projects (tiny GPT, SmolLM2) and a helper that copies one with pipeline settings changed."""
