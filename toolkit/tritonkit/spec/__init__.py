"""The `tritonkit.yaml` schema (pydantic v2) and its loader; field names mirror Triton's ModelConfig."""
