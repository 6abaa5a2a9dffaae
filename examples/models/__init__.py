"""Tiny PyTorch models with `build()` entry points returning (module, example_inputs), seeded, offline.

They serve the example repository and the export tests: each one exercises a different export path
(dynamic batch, KV cache, LSTM over a dynamic time axis, padding masks, a data-dependent branch).
"""
