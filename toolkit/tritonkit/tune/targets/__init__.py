"""What is tuned and how a candidate is measured: one model or a pipeline Model Analyzer profiles (`model.py`), a
whole pipeline measured end to end by perf_analyzer (`pipeline.py`, `perf.py`, `inputs.py`), or a pipeline running
an engine its plugin declares, measured by the plugin's streaming clients (`engine.py`)."""
