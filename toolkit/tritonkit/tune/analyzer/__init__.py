"""Model Analyzer, run by the strategy of that name: its config from the spec (`config.py`, over `space.py`), the
tritonserver and perf_analyzer it starts (`wrappers.py`), the run within a budget (`runner.py`, `progress.py`,
`resume.py`), what it wrote (`outputs.py`) and why a run measured nothing (`failures.py`)."""
