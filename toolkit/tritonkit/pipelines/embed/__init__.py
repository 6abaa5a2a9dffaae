"""Sentence embeddings: a tokenizer, the exported encoder (pooling and normalization as the model's own
sentence-transformers configuration says) and OpenAI's /v1/embeddings."""
