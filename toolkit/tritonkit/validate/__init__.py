"""Judges configs: Triton's ModelConfig protobuf first, then tritonkit's semantic checks on the messages."""
