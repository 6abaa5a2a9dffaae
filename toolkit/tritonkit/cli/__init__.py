"""The `tritonkit` command line: one module per command, errors rendered once in `output.py`."""
