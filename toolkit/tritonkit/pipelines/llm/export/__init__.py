"""PyTorch side of the LLM pipeline: KV-cache decoder wrappers, model entry points, and `prepare`.

Nothing here is imported inside Triton; importing this package does not import torch.
"""
