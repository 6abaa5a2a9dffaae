"""The embed pipeline behind /v1/embeddings (the `embed` ensemble: text or token ids in, an embedding out)."""
