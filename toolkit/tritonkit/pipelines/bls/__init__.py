"""BLS pipelines: Python models that call other models; `runtime/` ships into their version folders."""
