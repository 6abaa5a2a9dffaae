"""Jinja templates shipped with tritonkit (`model_config/`: one template per config.pbtxt section)."""
