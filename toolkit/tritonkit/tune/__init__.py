"""`tritonkit tune`: one search over one space, by one of several strategies, for one kind of target.

Flow: options (`options.py`) -> strategy (`strategies/`: Model Analyzer's quick or brute mode, or a walk over a
pipeline's knobs by coordinate descent or the grid) -> target (`targets/`: one model, a pipeline end to end, or a
pipeline's engine measured by its plugin's streams) -> space (`space/`: the knobs and points; `analyzer/space.py`
for Model Analyzer) -> measurements -> winner -> `tuned:` write-back and rebuild -> report and plot (`results/`).
"""
