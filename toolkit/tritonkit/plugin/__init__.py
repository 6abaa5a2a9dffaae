"""The pipeline plugin contract the core owns (`contract.py`) and the registry an entry point installs (`host.py`)."""
