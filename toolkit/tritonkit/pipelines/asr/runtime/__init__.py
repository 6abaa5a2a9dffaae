"""Plain-Python ASR runtime copied into model folders (as `asr_runtime`): features, decoding, per-stream state."""
