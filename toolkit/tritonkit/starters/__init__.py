"""Starter projects that `tritonkit init` writes: one folder per pipeline, shipped inside the package."""
