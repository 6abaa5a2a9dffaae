"""What the embed pipeline's Triton models run (numpy, tokenizers and the ONNX runner only): copied into their
version folders as `embed_runtime`, importable and tested outside Triton."""
