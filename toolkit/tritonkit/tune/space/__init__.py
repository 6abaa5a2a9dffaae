"""The search space: knobs and points (`knobs.py`), a pipeline's steps' knobs and how a point reaches their configs
and the spec (`steps.py`)."""
