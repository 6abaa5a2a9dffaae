"""`tritonkit tune`: profile a model or pipeline with Triton Model Analyzer and write the winner back to the spec.

Flow: target (what to tune) -> space (search space from the spec) -> ma_config (Model Analyzer's YAML)
-> runner (model-analyzer profile against the embedded Triton) -> results (CSV + checkpoint) -> winner
-> mapping (winning variant -> `tuned:` overlay) -> writeback (spec file) -> rebuild -> report/plot.
"""
