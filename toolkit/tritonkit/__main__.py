"""Allows `python -m tritonkit`."""
from tritonkit.cli.main import main

main()
