"""The bls pipeline as tritonkit's core sees it: a starter whose models are the shipped BLS pipeline's code."""
from tritonkit.plugin.contract import Pipeline, Starter

PIPELINE: Pipeline = Pipeline(
    "bls", "a Python model routing each request to one of two models (BLS), with declared calls and smoke answers",
    Starter(copies={f"models/{file}": f"pipelines/bls/triton/{file}" for file in ("route.py", "arith.py")}),
)
